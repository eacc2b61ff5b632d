"""`memrec view`'s Maps API, /api/dumps/{id}/maps (docs/api.md): the anonymous
mappings of mmap_prog (a known 64 KiB mapping left live, 4 mmaps, 1 mremap,
5 munmaps) and of mmap_many (1100 mappings, a known peak and end), each figure
exact; a dump without mappings has none; bad parameters get a 400."""
from __future__ import annotations

import re

import pytest

import memrec_support as support
from test_view_api import start_view

KIB = 1024


def recording(build, tmp_path_factory, program):
    run = support.record(build, program, tmp_path=tmp_path_factory.mktemp(program))
    plain = support.run_plain(build, program)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 1, run.dats
    return run.dats[0]


@pytest.fixture(scope="module")
def view(build, tmp_path_factory):
    names = ["mmap_prog", "mmap_many", "leak_three"]
    dats = [recording(build, tmp_path_factory, name) for name in names]
    server = start_view(build, dats)
    server.ids = {name: i for i, name in enumerate(names)}
    server.dats = dict(zip(names, dats))
    yield server
    support.kill_tree(server.proc)
    server.proc.communicate()


def maps(view, name, query=""):
    return view.json(f"/api/dumps/{view.ids[name]}/maps{query}")


def functions(row):
    return [f["function"] for f in row["frames"]]


def stack_figures(row):
    return (row["mmaps"], row["mremaps"], row["mapped_bytes"], row["unmapped_bytes"], row["live_bytes"],
            row["live_count"], row["peak_bytes"])


def test_the_live_mapping_is_the_64_kib_one_mapped_by_map_anon(view, build):
    # given mmap_prog's dump, whose only anonymous mapping left is 64 KiB from map_anon
    # when the Maps API is asked for the whole run
    answer = maps(view, "mmap_prog")
    # then that mapping is listed with its exact size, address and stack
    assert answer["mappings_total"] == 1
    (mapping,) = answer["mappings"]
    assert mapping["size_bytes"] == 64 * KIB
    assert re.fullmatch(r"0x[0-9a-f]+", mapping["address"]), mapping["address"]
    assert functions(mapping)[:2] == ["map_anon", "main"]
    assert mapping["label"] == "map_anon"
    assert mapping["frames"][0]["file"].endswith("mmap_prog.c")
    assert 0 < mapping["mapped_at_ns"] <= answer["range"]["to_ns"]
    # and the totals agree with the program and with memrec info
    info = support.info(build, view.dats["mmap_prog"])
    t = answer["totals"]
    assert (t["mmaps"], t["mremaps"], t["munmaps"]) == (4, 1, 5)
    assert (t["mmaps"], t["mremaps"], t["munmaps"]) == (info["counts"]["mmap"], info["counts"]["mremap"],
                                                         info["counts"]["munmap"])
    assert t["missed_munmaps"] == 1  # the file mapping's
    assert (t["live_bytes"], t["live_count"]) == (64 * KIB, 1) == (info["mmap"]["live_bytes"], info["mmap"]["live_count"])
    assert t["mapped_bytes"] == (1024 + 64 + 256 + 512 + 128) * KIB
    assert t["unmapped_bytes"] == (1024 + 256 + 512 + 128) * KIB
    assert t["peak_bytes"] == 1024 * KIB
    assert t["peak_at_ns"] is not None and t["peak_at_ns"] < mapping["mapped_at_ns"]


def test_each_mapping_stack_has_exact_figures(view):
    # given mmap_prog: map_anon called from four lines of main, and an mremap in main
    answer = maps(view, "mmap_prog")
    assert answer["stacks_total"] == 5
    by_map_anon = sorted(stack_figures(s) for s in answer["stacks"] if functions(s)[0] == "map_anon")
    remapped = [stack_figures(s) for s in answer["stacks"] if functions(s)[0] == "main"]
    # then each stack's mappings are counted as the program made them: A mapped
    # and unmapped 1 MiB; B keeps 64 KiB; C's 256 KiB moved away by the mremap;
    # D's 128 KiB unmapped in two calls, its middle first
    assert by_map_anon == sorted([
        (1, 0, 1024 * KIB, 1024 * KIB, 0, 0, 1024 * KIB),
        (1, 0, 64 * KIB, 0, 64 * KIB, 1, 64 * KIB),
        (1, 0, 256 * KIB, 256 * KIB, 0, 0, 256 * KIB),
        (1, 0, 128 * KIB, 128 * KIB, 0, 0, 128 * KIB),
    ])
    # and the mremap's 512 KiB belong to main's mremap call, unmapped since
    assert remapped == [(0, 1, 512 * KIB, 512 * KIB, 0, 0, 512 * KIB)]
    # and the stack still mapped comes first
    assert stack_figures(answer["stacks"][0]) == (1, 0, 64 * KIB, 0, 64 * KIB, 1, 64 * KIB)
    for s in answer["stacks"]:
        assert 0 < s["first_ns"] <= s["last_ns"] <= answer["range"]["to_ns"]


def test_the_series_ends_with_the_live_bytes_and_reaches_the_peak(view):
    # given both recordings with mappings
    for name, end, peak, maps_made, releases, live in [
        ("mmap_prog", 64 * KIB, 1024 * KIB, 5, 5, 1),
        ("mmap_many", 48 * KIB, 100 * 16 * KIB, 1100, 1097, 3),
    ]:
        series = maps(view, name)["series"]
        # then its last bucket holds what stays mapped, its highest the peak,
        # and it counts every mapping made and every release that took bytes
        assert series["mapped_bytes"][-1] == end, name
        assert max(series["mapped_max_bytes"]) == peak, name
        assert series["live_count"][-1] == live, name
        assert (sum(series["map_count"]), sum(series["unmap_count"])) == (maps_made, releases), name
        assert len(series["time_ns"]) <= 512, name
        assert series["time_ns"] == sorted(series["time_ns"]), name


def test_many_mappings_are_aggregated_per_stack(view):
    # given mmap_many: 100 × 16 KiB from grow_maps (3 kept), 1000 × 4 KiB made and unmapped by churn_maps
    answer = maps(view, "mmap_many")
    t = answer["totals"]
    assert (t["mmaps"], t["mremaps"], t["munmaps"], t["missed_munmaps"]) == (1100, 0, 1097, 0)
    assert (t["live_bytes"], t["live_count"], t["peak_bytes"]) == (48 * KIB, 3, 1600 * KIB)
    by_function = {functions(s)[0]: stack_figures(s) for s in answer["stacks"]}
    assert by_function == {
        "grow_maps": (100, 0, 1600 * KIB, 1552 * KIB, 48 * KIB, 3, 1600 * KIB),
        "churn_maps": (1000, 0, 4000 * KIB, 4000 * KIB, 0, 0, 4 * KIB),
    }
    # and the three live ones are listed, each 16 KiB from grow_maps
    assert [(m["size_bytes"], functions(m)[0]) for m in answer["mappings"]] == [(16 * KIB, "grow_maps")] * 3
    addresses = [int(m["address"], 16) for m in answer["mappings"]]
    assert addresses == sorted(addresses)  # equal sizes: by address


def test_a_range_lists_the_mappings_made_in_it(view):
    # given mmap_prog's live mapping, made at T
    whole = maps(view, "mmap_prog")
    at = whole["mappings"][0]["mapped_at_ns"]
    # when the range ends at T, or starts just after it
    until = maps(view, "mmap_prog", f"?from=0&to={at}")
    after = maps(view, "mmap_prog", f"?from={at + 1}")
    # then only the first lists it; the totals and stacks stay the whole run's
    assert [m["size_bytes"] for m in until["mappings"]] == [64 * KIB]
    assert (after["mappings"], after["mappings_total"]) == ([], 0)
    assert after["totals"] == whole["totals"] and after["stacks"] == whole["stacks"]
    # and the series covers the range's buckets only
    width = after["series"]["bucket_ns"]
    assert after["series"]["time_ns"] and all(t + width > at + 1 for t in after["series"]["time_ns"])
    assert all(t <= at for t in until["series"]["time_ns"])


def test_limit_keeps_the_largest(view):
    answer = maps(view, "mmap_many", "?limit=2")
    assert (len(answer["mappings"]), answer["mappings_total"]) == (2, 3)
    assert [functions(s)[0] for s in answer["stacks"]] == ["grow_maps", "churn_maps"]
    assert len(maps(view, "mmap_many", "?limit=1")["stacks"]) == 1


def test_a_dump_without_mappings_has_none(view):
    answer = maps(view, "leak_three")
    t = answer["totals"]
    assert (t["mmaps"], t["mremaps"], t["live_bytes"], t["peak_bytes"], t["peak_at_ns"]) == (0, 0, 0, 0, None)
    assert (answer["mappings"], answer["stacks"], answer["stacks_total"]) == ([], [], 0)
    assert set(answer["series"]["mapped_bytes"]) <= {0}


@pytest.mark.parametrize("query, status", [
    ("?limit=0", 400), ("?limit=1001", 400), ("?limit=x", 400), ("?from=5&to=1", 400), ("?from=-1", 400),
])
def test_bad_parameters_get_a_400(view, query, status):
    body = view.json(f"/api/dumps/{view.ids['mmap_prog']}/maps{query}", status)
    assert isinstance(body["error"], str) and body["error"]


def test_an_unknown_dump_gets_a_404(view):
    assert "error" in view.json("/api/dumps/9/maps", 404)
