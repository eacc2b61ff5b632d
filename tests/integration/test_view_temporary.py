"""The timeline's temporary allocations (docs/api.md, /timeline's
`temporary_count`) on tests/programs/temporaries: 7 blocks from temp_here and
5 from pair_second are freed before their thread allocates again. Each counts
in the bucket of its free, and only when it was also allocated in the range,
so the buckets sum to `memrec report --from --to`'s temporary count."""
from __future__ import annotations

import pytest

import memrec_support as support
from test_view_api import start_view

TEMPORARY_FUNCTIONS = ("temp_here", "pair_second")


@pytest.fixture(scope="module")
def dump(build, tmp_path_factory):
    run = support.record(build, "temporaries", tmp_path=tmp_path_factory.mktemp("temporaries"))
    assert run.returncode == 0, run.stderr
    assert run.stdout == "temporaries: 7 + 5\n"
    assert len(run.dats) == 1, run.dats
    return run.dats[0]


@pytest.fixture(scope="module")
def view(build, dump):
    server = start_view(build, [dump])
    yield server
    support.kill_tree(server.proc)
    server.proc.communicate()


@pytest.fixture(scope="module")
def rows(view):
    answer = view.json("/api/dumps/0/allocations?limit=1000")
    assert answer["total"] == 7 + 5 * 2 + 3, "temp_here 7, the pairs 5 × 2, keep_one 3"
    return answer["rows"]


def temporaries_of(rows):
    """(allocated, freed) of the known temporaries, from the allocation list."""
    found = [(r["time_ns"], r["free_ns"]) for r in rows if r["top"] and r["top"]["function"] in TEMPORARY_FUNCTIONS]
    assert len(found) == 12
    return found


def ask(build, view, dump, start, end):
    timeline = view.json(f"/api/dumps/0/timeline?from={start}&to={end}")
    summary = view.json(f"/api/dumps/0/summary?from={start}&to={end}")
    report = support.only_process(support.report(build, dump, args=["--from", f"{start}ns", "--to", f"{end}ns"]))
    return timeline, summary, report


def expected_buckets(timeline, temporaries, start, end):
    """Each temporary allocated and freed within [start, end], in the bucket of its free."""
    buckets = [0] * len(timeline["time_ns"])
    for allocated, freed in temporaries:
        if start <= allocated and freed <= end:
            buckets[(freed - start) // timeline["bucket_ns"]] += 1
    return buckets


def test_the_whole_runs_buckets_hold_the_twelve_temporaries_at_their_frees(view, rows, build, dump):
    # Given temporaries recorded: 12 temporary allocations
    temporaries = temporaries_of(rows)
    report = support.only_process(support.report(build, dump))
    # When the whole run's timeline is asked for
    timeline = view.json("/api/dumps/0/timeline")
    # Then its buckets hold them where they were freed, 12 in all, as the report and summary count
    assert sum(timeline["temporary_count"]) == report["temporary"] == 12
    assert view.json("/api/dumps/0/summary")["temporary"] == 12
    assert timeline["temporary_count"] == expected_buckets(timeline, temporaries, 0, timeline["range"]["to_ns"])
    # and none is counted that the allocation rate does not hold
    assert all(t <= f for t, f in zip(timeline["temporary_count"], timeline["free_count"]))


def test_a_ranges_buckets_sum_to_the_reports_temporary_count(view, rows, build, dump):
    temporaries = temporaries_of(rows)
    end = view.json("/api/dumps/0/summary")["duration_ns"]
    # Blocks whose malloc and free the clock tells apart (some share a tick): a range can cut them.
    spans = [(a, f) for a, f in temporaries if a < f]
    assert spans, "no temporary outlived a clock tick"
    (first_alloc, first_free), (last_alloc, last_free) = spans[0], spans[-1]
    middle_alloc, middle_free = temporaries[8]  # the second pair_second
    last = max(f for _, f in temporaries)
    ranges = {
        # a temporary allocated before the range, freed in it: left out
        "from after an allocation": (first_alloc + 1, end),
        # one allocated in the range, freed after it: left out
        "to before a free": (0, last_free - 1),
        "both cut": (first_alloc + 1, last_free - 1),
        "one pair": (middle_alloc, middle_free),
        "after the last free": (last + 1, end),
        "the whole run, one ns longer": (0, end + 1),
    }
    for name, (start, stop) in ranges.items():
        # When the view and the report are asked for the range
        timeline, summary, report = ask(build, view, dump, start, stop)
        # Then the buckets sum to the report's and the summary's temporary count, each at its free
        known = sum(1 for a, f in temporaries if start <= a and f <= stop)
        assert sum(timeline["temporary_count"]) == report["temporary"] == summary["temporary"] == known, name
        assert timeline["temporary_count"] == expected_buckets(timeline, temporaries, start, stop), name
        cut = [(a, f) for a, f in temporaries if (a < start <= f <= stop) or (start <= a <= stop < f)]
        assert bool(cut) == (name in ("from after an allocation", "to before a free", "both cut")), name
    assert sum(1 for a, f in temporaries if middle_alloc <= a and f <= middle_free) >= 1
