"""`memrec view`'s diff endpoints (docs/api.md "Diff") with ranges: /diff/sites
lists exactly the sites `memrec diff --json` finds changed in the metric, with
the same figures, for two dumps and for one dump against itself over two
ranges; /diff/flame and /diff/report honour the same ranges; a range that
ends before it starts, or is no number, is a 400 with a sentence, as the CLI
refuses it with exit 1."""
from __future__ import annotations

import json

import pytest

import memrec_support as support
# memrec view on this module's `dumps`, each by name in view.ids.
from test_view_ranges import view  # noqa: F401 (a fixture)

MS = 1_000_000
# The table's metrics and memrec diff's FIGURES field of each.
FIELDS = {"leaked": "leaked_bytes", "peak": "peak_bytes", "allocated": "allocated_bytes",
          "allocations": "allocations", "temporary": "temporary"}


@pytest.fixture(scope="module")
def dumps(build, tmp_path_factory):
    out = {}
    for name in ("timed_phases", "diff_leak_base", "diff_leak_extra"):
        run = support.record(build, name, tmp_path=tmp_path_factory.mktemp(name))
        assert run.returncode == 0, run.describe()
        out[name] = run.dats[0]
    return out


def cli_diff(build, *args):
    run = support.memrec_raw(build, ["diff", *map(str, args), "--json"])
    assert run.returncode == 0, run.describe()
    return json.loads(run.stdout)


def cli_rows(doc, field):
    return sorted((s["label"], s["status"], s["base"][field], s["new"][field], s["change"][field])
                  for s in doc["sites"] if s["change"][field] != 0)


def view_rows(answer):
    return sorted((s["label"], s["status"], s["base"], s["new"], s["change"]) for s in answer["sites"])


def query(**params):
    return "&".join(f"{k}={v}" for k, v in params.items())


# (view parameters, memrec diff arguments) over timed_phases: 0 ms phase_one
# holds 4 x 10000, 300 ms phase_two leaks 2 x 50000, 600 ms the rest.
PHASE_RANGES = [
    ({"base_to": 300 * MS, "new_from": 300 * MS}, ["--to", "300ms", "--from", "300ms"]),
    ({"base_from": 250 * MS, "base_to": 650 * MS, "new_from": 600 * MS},
     ["--from", "250ms", "--to", "650ms", "--from", "600ms"]),
    ({"new_to": 350 * MS}, ["--from", "0", "--from", "0", "--to", "350ms"]),
]


@pytest.mark.parametrize("ranges,args", PHASE_RANGES)
@pytest.mark.parametrize("metric", FIELDS)
def test_one_dump_against_itself_equals_memrec_diff_with_two_ranges(build, dumps, view, ranges, args, metric):
    # given timed_phases loaded once, as base and new
    phases = view.ids["timed_phases"]
    # when its two ranges are compared by the view and by memrec diff
    answer = view.json(f"/api/diff/sites?" + query(base=phases, new=phases, metric=metric, limit=5000, **ranges))
    doc = cli_diff(build, dumps["timed_phases"], *args)
    field = FIELDS[metric]
    # then the changed sites and the totals are memrec diff's, row for row
    assert view_rows(answer) == cli_rows(doc, field)
    assert answer["total"] == len(answer["sites"])
    assert answer["totals"] == {k: doc["totals"][k][field] for k in ("base", "new", "change")}
    assert answer["base_range"] == doc["base"]["window"] and answer["new_range"] == doc["new"]["window"]
    for s in answer["sites"]:
        assert s["percent"] == (None if s["base"] == 0 else pytest.approx(s["change"] * 100 / s["base"]))
        assert (s["new_site"] is None) == (s["status"] == "vanished")
        assert (s["base_site"] is None) == (s["status"] == "new")


def test_the_first_range_against_the_second_names_the_known_changes(view):
    phases = view.ids["timed_phases"]
    answer = view.json("/api/diff/sites?" + query(base=phases, new=phases, metric="allocated",
                                                 base_to=300 * MS, new_from=300 * MS))
    rows = {s["label"]: s for s in answer["sites"]}
    assert (rows["phase_two"]["status"], rows["phase_two"]["change"]) == ("new", 100000)
    assert (rows["phase_one"]["status"], rows["phase_one"]["change"], rows["phase_one"]["percent"]) == \
        ("changed", -40000, -100.0)
    # the largest change first, either way: phase_two's 100000, many_small's 56125, phase_one's -40000
    assert [s["label"] for s in answer["sites"][:3]] == ["phase_two", "many_small", "phase_one"]
    by_delta = view.json("/api/diff/sites?" + query(base=phases, new=phases, metric="allocated",
                                                   base_to=300 * MS, new_from=300 * MS, sort="delta", limit=2))
    assert [s["label"] for s in by_delta["sites"]] == ["phase_two", "many_small"]
    assert by_delta["total"] == answer["total"] > 2


def test_two_dumps_each_over_its_range_equal_memrec_diff_with_per_side_flags(build, dumps, view):
    base, extra = view.ids["diff_leak_base"], view.ids["diff_leak_extra"]
    whole = view.json(f"/api/diff/sites?base={base}&new={extra}&metric=leaked")
    assert [(s["label"], s["status"], s["change"]) for s in whole["sites"]] == [("leak_extra", "new", 3333)]
    # NEW up to half its run: whatever diff_leak_extra did by then, as memrec diff --new-to says
    half = view.json(f"/api/dumps/{extra}/summary")["duration_ns"] // 2
    doc = cli_diff(build, dumps["diff_leak_base"], dumps["diff_leak_extra"], "--new-to", f"{half}ns")
    for metric, field in FIELDS.items():
        answer = view.json(f"/api/diff/sites?base={base}&new={extra}&metric={metric}&new_to={half}")
        assert view_rows(answer) == cli_rows(doc, field), metric


def test_the_flamegraph_and_the_report_honour_the_ranges(build, dumps, view):
    phases = view.ids["timed_phases"]
    ranges = query(base=phases, new=phases, base_to=300 * MS, new_from=300 * MS)
    doc = cli_diff(build, dumps["timed_phases"], "--to", "300ms", "--from", "300ms")
    flame = view.json(f"/api/diff/flame?{ranges}&metric=allocated")
    assert (flame["base_total"], flame["new_total"]) == (40000, doc["totals"]["new"]["allocated_bytes"])
    assert flame["base_range"] == {"from_ns": 0, "to_ns": 300 * MS}
    code, headers, body = view.get(f"/api/diff/report?{ranges}&format=json")
    assert code == 200, body[:300]
    assert json.loads(body) == doc


@pytest.mark.parametrize("params,status,message", [
    ("base_from=500000000&base_to=100000000", 400,
     "base_from (500000000 ns) is after base_to (100000000 ns): a range must not end before it starts."),
    ("new_from=1.5s", 400, "new_from must be a whole number of ns since the dump's start"),
    ("sort=size", 400, "Unknown sort 'size': use one of magnitude, delta, percent."),
    ("metric=live", 400, "Unknown metric 'live'"),
    ("limit=0", 400, "limit must be a whole number from 1 to 5000."),
])
def test_a_bad_range_or_parameter_is_a_400_with_a_sentence(view, params, status, message):
    phases = view.ids["timed_phases"]
    for endpoint in ("sites", "flame", "report") if params.startswith(("base_", "new_")) else ("sites",):
        extra = "&format=json" if endpoint == "report" else ""
        doc = view.json(f"/api/diff/{endpoint}?base={phases}&new={phases}&{params}{extra}", status=status)
        assert doc["error"].startswith(message), (endpoint, doc)


def test_memrec_diff_refuses_the_same_range_with_exit_1(build, dumps):
    run = support.memrec_raw(build, ["diff", dumps["timed_phases"], dumps["timed_phases"],
                                     "--base-from", "500ms", "--base-to", "100ms"])
    assert run.returncode == 1
    assert "--base-to 100ms is before --base-from 500ms" in run.stderr


def test_a_missing_dump_is_a_404(view):
    doc = view.json("/api/diff/sites?base=0&new=7", status=404)
    assert doc["error"] == "No dump has id 7."
