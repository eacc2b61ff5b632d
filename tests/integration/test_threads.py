"""Threads: frees on another thread than the allocation, address reuse across
threads, and threads that exit before their events are written."""
from memrec_support import assert_consistent, assert_leaks


def test_blocks_passed_between_threads_are_all_freed_in_the_dump(record, only_dump, leaks_by_function):
    # given threads_pass: 4 threads in a ring, each allocating 20000 blocks in
    # produce() that the next thread frees in consume(), so glibc hands freed
    # blocks back to other threads all the time
    # when it runs under the preload
    run = record("threads_pass")
    assert run.returncode == 0, run.describe()
    assert run.stdout == "threads_pass: 80000 blocks freed across threads, 0 bad\n"
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    # then the dump orders every free before the reuse of its address: no
    # block of the program stays live and no free is of an unknown block
    leaks = leaks_by_function(dump)
    for name in ("produce", "consume", "ring_worker", "main"):
        assert name not in leaks, f"{name} leaks {leaks[name]}"
    # run_ring may keep glibc's per-thread blocks of pthread_create (stack cache)
    assert_leaks(leaks, {}, ignore=("run_ring",))
    assert dump["heap"]["unmatched_frees"] == 0
    assert dump["counts"]["alloc"] >= 80000
    assert dump["counts"]["free"] >= 80000
    assert len(dump["threads"]) >= 5
    assert dump["counters"]["threads"] >= 5


def test_threads_that_exit_at_once_still_have_their_leaks_and_exits_recorded(record, only_dump,
                                                                             leaks_by_function):
    # given thread_exit: 8 threads named leaker-0..7 that each leak 1111 bytes
    # from thread_leak and exit at once, while the main thread goes on
    # when it runs under the preload
    run = record("thread_exit")
    assert run.returncode == 0, run.describe()
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    # then all 8 leaks are there
    assert_leaks(leaks_by_function(dump), {"thread_leak": (8, 8 * 1111)}, ignore=("main",))
    # and all 8 threads are listed by name, with their exit
    leakers = sorted((t for t in dump["threads"] if t["name"].startswith("leaker-")), key=lambda t: t["name"])
    assert [t["name"] for t in leakers] == [f"leaker-{i}" for i in range(8)]
    for thread in leakers:
        assert thread["exit_ns"] is not None, thread
        assert thread["start_ns"] <= thread["exit_ns"]
    assert len({t["tid"] for t in dump["threads"]}) == len(dump["threads"])
    assert dump["counters"]["threads"] >= 9
