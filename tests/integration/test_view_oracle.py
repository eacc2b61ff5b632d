"""`memrec view`'s range and instant answers on a mid-size dump (50 M events)
equal those computed from the dump's whole event list.

tests/programs/churn_sites makes 25 M allocations from 8 call sites, frees
most of them (one in 16 at once, a temporary), its live heap rising and falling
in waves, and leaks 100 blocks. tests/oracle/view_event_oracle replays the
dump's events in merged order with a replay of its own (not the allocation
table's) and gives, for each asked range, the totals, the peak and when,
each site's figures and what it kept live at a later instant, and for each instant the heap, the live blocks and each
site's live bytes; the test asks the running view the same over HTTP, so the
check holds whatever stores the table. Ranges are random (a fixed seed) and
some start or end exactly at an allocation's time, where an off-by-one at a
boundary changes the answer: the test shows that the comparison catches one.
"""
from __future__ import annotations

import json
import random
import subprocess
import time

import pytest

import memrec_support as support
from test_view_api import start_view

ALLOCATIONS = 25_000_000  # with their frees: 50 M events
SLOW_TIMEOUT_S = 900
SEED = 37


@pytest.fixture(scope="module")
def mid_dump(build, tmp_path_factory):
    run = support.record(build, "churn_sites", [str(ALLOCATIONS)], tmp_path=tmp_path_factory.mktemp("oracle"),
                         timeout=SLOW_TIMEOUT_S)
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 1, run.describe()
    return run.dats[0]


@pytest.fixture(scope="module")
def view(build, mid_dump):
    server = start_view(build, [mid_dump])
    deadline = time.monotonic() + SLOW_TIMEOUT_S
    while server.json("/api/dumps")["dumps"][0].get("table", {}).get("state") != "ready":
        assert time.monotonic() < deadline, "the allocation table was never built"
        time.sleep(0.5)
    yield server
    support.kill_tree(server.proc)
    server.proc.communicate()


def allocation_time(view, offset):
    """The time of the allocation `offset` in time order, as the view lists it."""
    rows = view.json(f"/api/dumps/0/allocations?sort=time&order=asc&offset={offset}&limit=1")["rows"]
    return rows[0]["time_ns"]


def queries(view):
    """Random ranges and instants over the run, some ends exactly at an allocation."""
    dump = view.json("/api/dumps")["dumps"][0]
    end = dump["duration_ns"]
    count = dump["allocations"]
    rnd = random.Random(SEED)
    ranges = [[0, end]]
    for _ in range(10):
        a, b = sorted(rnd.randrange(end + 1) for _ in range(2))
        ranges.append([a, b, rnd.randrange(b, end + 1)])  # and what it kept at a later instant
    for _ in range(4):
        a, b = sorted(rnd.randrange(count) for _ in range(2))
        ranges.append([allocation_time(view, a), allocation_time(view, b)])
    ranges.append([end // 3, end // 3])  # a single ns
    instants = [0, end] + [rnd.randrange(end + 1) for _ in range(8)]
    instants += [allocation_time(view, rnd.randrange(count)) for _ in range(3)]
    return {"ranges": ranges, "instants": instants}


def oracle(build, dump, asked, tmp_path):
    path = tmp_path / "queries.json"
    path.write_text(json.dumps(asked))
    run = subprocess.run([build.root / "tests" / "oracle" / "view_event_oracle", dump, path],
                         capture_output=True, timeout=SLOW_TIMEOUT_S)
    assert run.returncode == 0, run.stderr.decode()
    return json.loads(run.stdout)


def view_kept(view, from_ns, to_ns, at_ns):
    """What the view says [from_ns, to_ns] allocated and is still live at at_ns."""
    doc = view.json(f"/api/dumps/0/sites?from={from_ns}&to={to_ns}&at={at_ns}&sort=kept&limit=1000")
    return {"at_ns": at_ns, "bytes": doc["kept"]["bytes"], "count": doc["kept"]["count"],
            "sites": {str(r["id"]): [r["kept_bytes"], r["kept_count"]] for r in doc["sites"] if r["kept_count"]}}


def view_range(view, from_ns, to_ns, kept_at=None):
    """The view's answers for [from_ns, to_ns] in the oracle's shape."""
    q = f"from={from_ns}&to={to_ns}"
    s = view.json(f"/api/dumps/0/summary?{q}")
    sites = {}
    for row in view.json(f"/api/dumps/0/sites?{q}&sort=allocations&limit=1000")["sites"]:
        f = {k: row[k] for k in ("allocations", "allocated_bytes", "temporary", "peak_bytes")}
        f["leaked_bytes"] = row["leaked_bytes"] + row["runtime_retained_bytes"]
        f["leaked_count"] = row["leaked_count"] + row["runtime_retained_count"]
        if f["allocations"] or f["leaked_bytes"] or f["peak_bytes"]:
            sites[str(row["id"])] = f
    out = {"from_ns": from_ns, "to_ns": to_ns,
           "allocations": s["allocations"], "allocated_bytes": s["allocated_bytes"], "frees": s["frees"],
           "unmatched_frees": s["unmatched_frees"], "temporary": s["temporary"],
           "leaked_bytes": s["leaked"]["bytes"] + s["runtime_retained"]["bytes"],
           "leaked_count": s["leaked"]["count"] + s["runtime_retained"]["count"],
           "peak_bytes": s["peak"]["bytes"], "peak_time_ns": s["peak"]["time_ns"], "sites": sites}
    if kept_at is not None:
        out["kept"] = view_kept(view, from_ns, to_ns, kept_at)
    return out


def view_instant(view, at_ns):
    i = view.json(f"/api/dumps/0/instant?at={at_ns}")
    live = view.json(f"/api/dumps/0/sites?at={at_ns}&sort=live&limit=1000")["sites"]
    return {"at_ns": at_ns, "heap_bytes": i["heap_bytes"], "live_count": i["live_count"],
            "sites": {str(r["id"]): [r["live_bytes"], r["live_count"]] for r in live if r.get("live_bytes")},
            "top": {str(r["id"]): [r["live_bytes"], r["live_count"]] for r in i["top"]}}


@pytest.fixture(scope="module")
def answers(build, mid_dump, view, tmp_path_factory):
    """The asked ranges and instants, the off-by-one ones (ranges ending 1 ns
    before an allocation, instants 1 ns before it) and the oracle's answers
    for both, from one replay of the dump."""
    asked = queries(view)
    count = view.json("/api/dumps")["dumps"][0]["allocations"]
    rnd = random.Random(SEED + 1)
    ends = [allocation_time(view, rnd.randrange(1, count)) for _ in range(3)]
    everything = {"ranges": asked["ranges"] + [[0, t - 1] for t in ends],
                  "instants": asked["instants"] + [t - 1 for t in ends]}
    started = time.monotonic()
    expected = oracle(build, mid_dump, everything, tmp_path_factory.mktemp("oracle"))
    print(f"oracle: {time.monotonic() - started:.1f} s for {len(everything['ranges'])} ranges, "
          f"{len(everything['instants'])} instants")
    n, m = len(asked["ranges"]), len(asked["instants"])
    return {"ranges": expected["ranges"][:n], "instants": expected["instants"][:m], "ends": ends,
            "shorter_ranges": expected["ranges"][n:], "shorter_instants": expected["instants"][m:]}


def test_the_views_ranges_and_instants_equal_the_event_lists(view, answers):
    # given 16 ranges and 13 instants over a dump of 50 M events, and the oracle's answers
    # then the view's range answers are the oracle's, totals and each site (and what 10 of them kept)
    assert answers["ranges"][0]["allocations"] >= ALLOCATIONS
    for want in answers["ranges"]:
        got = view_range(view, want["from_ns"], want["to_ns"], want.get("kept", {}).get("at_ns"))
        assert got == want, (want["from_ns"], want["to_ns"])
    # and its instants: the heap, the live blocks and each site's live bytes and blocks
    for want in answers["instants"]:
        got = view_instant(view, want["at_ns"])
        assert got["heap_bytes"] == want["heap_bytes"] and got["live_count"] == want["live_count"], want["at_ns"]
        assert got["sites"] == {k: v for k, v in want["sites"].items() if v[0]}, want["at_ns"]
        assert got["top"] == {k: want["sites"][k] for k in got["top"]}, want["at_ns"]


def test_the_comparison_catches_a_range_off_by_one_ns(view, answers):
    # given ranges that end exactly at an allocation, and the oracle's answers 1 ns shorter
    # then none of them is the view's answer for the range that includes the allocation
    for t, want in zip(answers["ends"], answers["shorter_ranges"]):
        got = view_range(view, 0, t)
        assert got["allocations"] > want["allocations"], t
        assert got != {**want, "to_ns": t}
    for t, want in zip(answers["ends"], answers["shorter_instants"]):
        got = view_instant(view, t)
        assert (got["live_count"], got["heap_bytes"]) != (want["live_count"], want["heap_bytes"]), t
