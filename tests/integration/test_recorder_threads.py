"""The recorder's own threads in the dump's counters: each one's CPU time and
the events it coded (FORMAT.md, "Counters"), as `memrec info` shows them."""

import pytest

import memrec_support as support
from memrec_support import STAMPS, assert_stamped_by


def test_the_writer_reports_its_cpu_time_and_every_event_it_coded(build, record, run_plain, only_dump):
    # given churn, one thread making 200,000 allocations (the writer starts
    # when its ring fills)
    plain = run_plain("churn", "200000")
    # when it runs under the preload
    run = record("churn", "200000")
    # then it behaves as without the preload
    assert (run.returncode, run.stdout) == (0, plain.stdout) == (0, "churn: 200000 allocations\n"), run.describe()
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert (dump["counts"]["alloc"], dump["counts"]["free"]) == (200000, 200000)
    # and the dump names one recorder thread, the writer, which coded every
    # event the dump holds and spent CPU time doing it
    threads = dump["recorder_threads"]
    assert [t["thread"] for t in threads] == [0]
    assert threads[0]["events"] == dump["counters"]["events"]
    assert dump["counters"]["events"] >= 400000
    assert threads[0]["cpu_ns"] > 0
    assert dump["counters"]["recorder_thread_0_cpu_ns"] == threads[0]["cpu_ns"]
    assert dump["counters"]["recorder_thread_0_events"] == threads[0]["events"]
    # and the text summary shows it
    text = support.memrec_raw(build, ["info", str(run.dats[0])])
    assert text.returncode == 0, text.describe()
    line = next(ln for ln in text.stdout.splitlines() if ln.startswith("  recorder  thread 0: "))
    assert f", {threads[0]['events']} events, " in line


def record_cross_free(record, only_dump, writers: str, stamp: str):
    """cross_free_threads with 8 threads handing 2,000 blocks each to the
    next, recorded with MEMREC_WRITERS=`writers` and MEMREC_STAMP=`stamp`:
    the run and its one dump, every block handed across threads (and so
    across writers) freed after its allocation, nothing left live or unknown."""
    run = record("cross_free_threads", "8", "2000", env={"MEMREC_WRITERS": writers, "MEMREC_STAMP": stamp})
    assert (run.returncode, run.stdout) == (0, "cross_free_threads: 8 threads passed 2000 blocks each, 0 bad\n"), \
        run.describe()
    dump = only_dump(run)
    assert_stamped_by(stamp, run, dump["counters"])
    support.assert_consistent(dump)
    assert dump["heap"]["unmatched_frees"] == 0
    return run, dump


@pytest.mark.parametrize("stamp", STAMPS)
def test_with_one_writer_many_program_threads_share_it_and_it_codes_all_their_events(record, only_dump, stamp):
    # given cross_free_threads recorded with a single writer
    _, dump = record_cross_free(record, only_dump, "1", stamp)
    # then one recorder thread coded every event of the 8
    threads = dump["recorder_threads"]
    assert len(threads) == 1
    assert threads[0]["events"] == dump["counters"]["events"]
    assert dump["counts"]["alloc"] >= 8 * 2000
    assert threads[0]["cpu_ns"] > 0


@pytest.mark.parametrize("stamp", STAMPS)
def test_eight_program_threads_are_dealt_to_four_writers_whose_counters_add_up(build, record, only_dump, stamp):
    # given cross_free_threads recorded with a pool of 4 writers: the main
    # thread goes to the main writer, the 8 threads in turn to writers 1, 2,
    # 3, 0, 1, 2, 3, 0 (record_cross_free checks every cross-writer free)
    run, dump = record_cross_free(record, only_dump, "4", stamp)
    # then the dump names four recorder threads, each of which coded events
    # and spent CPU time, and whose events add up to the dump's
    threads = dump["recorder_threads"]
    assert [t["thread"] for t in threads] == [0, 1, 2, 3]
    assert sum(t["events"] for t in threads) == dump["counters"]["events"]
    for t in threads:
        assert t["cpu_ns"] > 0, threads
        # two program threads each, every one allocating and freeing 2,000 blocks or more
        assert t["events"] >= 2 * 2 * 2000, threads
    # and `memrec info` lists each of them
    text = support.memrec_raw(build, ["info", str(run.dats[0])])
    assert text.returncode == 0, text.describe()
    assert [ln.split(":")[0] for ln in text.stdout.splitlines() if ln.startswith("  recorder  thread ")] == \
        [f"  recorder  thread {i}" for i in range(4)]


def test_a_process_that_never_started_its_writer_names_no_recorder_thread(record, only_dump):
    # given a program that allocates too little to start the writer and
    # checks it is alone (the dump is written at exit on its own thread)
    run = record("alone_check")
    assert (run.returncode, run.stdout) == (0, "threads: 1\n"), run.describe()
    dump = only_dump(run)
    # then the dump holds its events but no recorder thread's counters
    assert (dump["counts"]["alloc"], dump["counts"]["free"]) == (15, 10)
    assert dump["recorder_threads"] == []
    assert not any(name.startswith("recorder_thread_") for name in dump["counters"])
