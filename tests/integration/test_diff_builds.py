"""memrec diff: two builds of diff_leak that differ in one leak are told apart
exactly; the same program run twice diffs to nothing; --fail-if gates exit 4."""
import json

import pytest

import memrec_support as support


def diff(build, *args, expect=0) -> support.Run:
    run = support.memrec_raw(build, ["diff", *map(str, args)])
    assert run.returncode == expect, run.describe()
    return run


@pytest.fixture
def dats(record):
    def _record(program):
        run = record(program)
        assert run.returncode == 0, run.describe()
        return run.dats[0]
    return _record


def test_one_extra_leak_is_the_only_change(build, dats):
    base, new = dats("diff_leak_base"), dats("diff_leak_extra")
    doc = json.loads(diff(build, base, new, "--json").stdout)
    # then exactly one site changed: leak_extra, new, 3333 bytes in one block
    sites = support.diff_sites(doc)
    assert len(sites) == 1, sites
    site = sites[0]
    assert site["status"] == "new"
    assert [f["function"] for f in site["frames"][:2]] == ["leak_extra", "main"]
    assert site["frames"][0]["file"].endswith("diff_leak.c") and site["frames"][0]["line"] > 0
    assert doc["frames"] == [f for f in site["frames"]]  # only the listed site's frames, in its order
    assert site["change"] == {"peak_bytes": 0, "leaked_bytes": 3333, "leaked_count": 1, "allocated_bytes": 3333,
                              "allocations": 1, "temporary": 0}
    # and the totals moved by that much, the peak (hold_big's 50000) not at all
    assert doc["totals"]["change"] == site["change"]
    # and in text, the site and its frames are named
    text = diff(build, base, new).stdout
    assert "[new] leaked +3.3 KiB (+1 block), peak 0 B, allocated +3.3 KiB (+1 call)" in text and "leak_extra" in text
    # and the totals in sizes with the change in percent (2000 -> 5333 bytes, 2 -> 3 blocks)
    rows = {line[:16].strip(): line[16:].split() for line in text.splitlines()}
    assert rows["leaked"] == ["2.0", "KiB", "5.2", "KiB", "+3.3", "KiB", "+166.7%"]
    assert rows["leaked blocks"] == ["2", "3", "+1", "+50.0%"]
    assert "1 call site changed:" in text


def test_the_same_program_twice_diffs_to_nothing(build, dats):
    a, b = dats("diff_leak_base"), dats("diff_leak_base")
    doc = json.loads(diff(build, a, b, "--json", "--fail-if", "new-leak,peak>0,leaked>0,allocations>0").stdout)
    assert support.diff_sites(doc) == [] and doc["frames"] == []
    assert set(doc["totals"]["change"].values()) == {0}
    assert not any(g["crossed"] for g in doc["fail_if"])
    assert "No call site changed." in diff(build, a, b).stdout


@pytest.mark.parametrize("threshold,crossed", [
    ("new-leak", True), ("leaked>10%", True), ("leaked>3332", True), ("leaked>3333", False),
    ("leaked>1MiB", False), ("peak>5%", False), ("allocations>0", True),
    ("temporary>0", False),  # hold_big's one temporary in both builds
])
def test_fail_if_exits_4_with_the_reason(build, dats, threshold, crossed):
    base, new = dats("diff_leak_base"), dats("diff_leak_extra")
    run = diff(build, base, new, "--fail-if", threshold, expect=4 if crossed else 0)
    if crossed:
        assert f"threshold crossed: {threshold}" in run.stderr
    if threshold == "new-leak":
        assert "leak_extra leaks 3333 bytes in 1 block," in run.stderr


def test_shrinkage_is_reported_the_other_way(build, dats):
    base, new = dats("diff_leak_extra"), dats("diff_leak_base")
    doc = json.loads(diff(build, base, new, "--json", "--fail-if", "new-leak").stdout)
    assert [(s["status"], s["frames"][0]["function"]) for s in support.diff_sites(doc)] == [("vanished", "leak_extra")]
    assert doc["totals"]["change"]["leaked_bytes"] == -3333


def test_ranges_of_one_dump(build, dats):
    dat = dats("diff_leak_base")
    # when the whole recording is diffed against a range after its end
    doc = json.loads(diff(build, dat, "--json", "--new-from", "1h").stdout)
    assert doc["base"]["window"]["from_ns"] == 0 and doc["new"]["window"]["from_ns"] == 3600 * 10**9
    # then the program's sites vanish, leak_kept with its 2 x 1000 bytes
    assert doc["totals"]["new"]["allocations"] == 0
    assert doc["totals"]["change"]["leaked_bytes"] == -2000
    kept = [s for s in support.diff_sites(doc) if s["frames"] and s["frames"][0]["function"] == "leak_kept"]
    assert [(s["status"], s["change"]["leaked_bytes"]) for s in kept] == [("vanished", -2000)]


@pytest.mark.parametrize("args,code", [
    (["--fail-if", "peak>>5"], 1), (["--fail-if", "speed>5%"], 1), (["--base-from", "later"], 1),
])
def test_bad_usage_exits_1(build, dats, args, code):
    dat = dats("diff_leak_base")
    diff(build, dat, dat, *args, expect=code)


def test_a_missing_dump_exits_2(build, dats, tmp_path):
    dat = dats("diff_leak_base")
    run = diff(build, dat, tmp_path / "nope.dat", expect=2)
    assert "nope.dat" in run.stderr
