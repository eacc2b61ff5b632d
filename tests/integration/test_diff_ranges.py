"""memrec diff with --from/--to: two ranges of one dump, phase against phase,
on timed_phases (0 ms: phase_one holds 4 x 10000 until 600 ms; 300 ms:
phase_two leaks 2 x 50000; 600 ms: phase_three leaks 3 x 7000 and more), and
one range applied to two dumps. The per-side flags (--base-from ...) are
tested in test_diff_builds.py."""
import json

import pytest

import memrec_support as support

MS = 1_000_000
ZERO = {"peak_bytes": 0, "leaked_bytes": 0, "leaked_count": 0, "allocated_bytes": 0, "allocations": 0,
        "temporary": 0}


def diff(build, *args, expect=0) -> support.Run:
    run = support.memrec_raw(build, ["diff", *map(str, args)])
    assert run.returncode == expect, run.describe()
    return run


def figures(peak, leaked, count, allocated, allocations, temporary=0):
    return {"peak_bytes": peak, "leaked_bytes": leaked, "leaked_count": count, "allocated_bytes": allocated,
            "allocations": allocations, "temporary": temporary}


def by_function(doc):
    return {s["frames"][0]["function"]: s for s in support.diff_sites(doc)}


@pytest.fixture(scope="module")
def phases(build, tmp_path_factory):
    run = support.record(build, "timed_phases", tmp_path=tmp_path_factory.mktemp("timed_phases"))
    assert run.returncode == 0, run.describe()
    return run.dats[0]


def test_phase_one_against_phase_two(build, phases):
    # when [0, 150 ms] (phase_one) is diffed against [150 ms, 450 ms] (phase_two)
    doc = json.loads(diff(build, phases, "--from", "0", "--to", "150ms", "--from", "150ms", "--to", "450ms",
                          "--json").stdout)
    assert doc["base"]["window"] == {"from_ns": 0, "to_ns": 150 * MS}
    assert doc["new"]["window"] == {"from_ns": 150 * MS, "to_ns": 450 * MS}
    # then exactly two sites changed, phase_two's new leak first
    assert [s["frames"][0]["function"] for s in support.diff_sites(doc)] == ["phase_two", "phase_one"]
    sites = by_function(doc)
    two = sites["phase_two"]
    assert two["status"] == "new"
    assert (two["base"], two["new"]) == (ZERO, figures(100000, 100000, 2, 100000, 2))
    # phase_one allocated and leaked (live at 150 ms) its 4 blocks in BASE, nothing in NEW,
    # and still held 40000 bytes at NEW's peak (140000 at 300 ms)
    one = sites["phase_one"]
    assert one["status"] == "changed"
    assert one["base"] == figures(40000, 40000, 4, 40000, 4)
    assert one["new"] == figures(40000, 0, 0, 0, 0)
    assert one["change"] == figures(0, -40000, -4, -40000, -4)
    assert doc["totals"]["base"] == figures(40000, 40000, 4, 40000, 4)
    assert doc["totals"]["new"] == figures(140000, 100000, 2, 100000, 2)


def test_the_text_names_each_sides_range(build, phases):
    text = diff(build, phases, "--from", "0", "--to", "150ms", "--from", "150ms", "--to", "450ms").stdout
    assert text.startswith(f"memrec diff: {phases} [0.000 s to 0.150 s] -> {phases} [0.150 s to 0.450 s]\n"), text
    assert "[new] leaked +97.7 KiB (+2 blocks), peak +97.7 KiB, allocated +97.7 KiB (+2 calls)" in text


def test_a_lone_to_then_a_lone_from_split_the_run_in_two(build, phases):
    # --to 450ms --from 450ms: the run up to 450 ms against the rest
    doc = json.loads(diff(build, phases, "--to", "450ms", "--from", "450ms", "--json").stdout)
    assert doc["base"]["window"] == {"from_ns": 0, "to_ns": 450 * MS}
    assert doc["new"]["window"] == {"from_ns": 450 * MS, "to_ns": None}
    sites = by_function(doc)
    # phase_three allocates and leaks only after 450 ms; NEW's peak is the 140000 it opens with
    assert sites["phase_three"]["status"] == "new"
    assert sites["phase_three"]["new"] == figures(0, 21000, 3, 21000, 3)
    assert sites["phase_one"]["change"] == figures(0, -40000, -4, -40000, -4)
    assert sites["phase_two"]["change"] == figures(0, -100000, -2, -100000, -2)
    # many_small's 250 blocks, each freed before its thread's next allocation, are temporaries
    assert sites["many_small"]["new"]["temporary"] == sites["many_small"]["new"]["allocations"] == 250
    # and the sites share one table of frames: _start once, however many sites it is under
    assert len(sites) >= 3 and [f["label"] for f in doc["frames"]].count("_start") == 1
    assert all(s["frames"][-1]["label"] in ("_start", "clone3") for s in sites.values())


def test_one_range_applies_to_both_dumps(build, record):
    base, new = record("diff_leak_base"), record("diff_leak_extra")
    assert base.returncode == new.returncode == 0
    doc = json.loads(diff(build, base.dats[0], new.dats[0], "--from", "0", "--to", "1h", "--json").stdout)
    assert doc["base"]["window"] == doc["new"]["window"] == {"from_ns": 0, "to_ns": 3600 * 10**9}
    assert [(s["status"], s["frames"][0]["function"]) for s in support.diff_sites(doc)] == [("new", "leak_extra")]
    assert doc["sites"][0]["change"] == figures(0, 3333, 1, 3333, 1)


@pytest.mark.parametrize("args,message", [
    (["--from", "0", "--to", "1s"], "one dump needs two ranges"),
    (["--from", "0", "--from", "1s", "--from", "2s"], "3 --from/--to ranges given"),
    (["--from", "0", "--to", "1s", "--from", "1s", "--base-to", "2s"], "not both"),
    (["--from", "2s", "--to", "1s", "--from", "0"], "--to 1s is before --from 2s"),
    (["--from", "soon", "--to", "1s", "--from", "0"], "--from 'soon' is not a time"),
])
def test_bad_ranges_exit_1_with_the_reason(build, phases, args, message):
    run = diff(build, phases, *args, expect=1)
    assert message in run.stderr
