"""Threads: frees on another thread than the allocation, address reuse across
threads, and threads that exit before their events are written."""

import pytest

import memrec_support as support
from memrec_support import STAMPS, assert_consistent, assert_leaks, assert_stamped_by, leaked_by_function, \
    sites_by_function


@pytest.mark.parametrize("stamp", STAMPS)
def test_blocks_passed_between_threads_are_all_freed_in_the_dump(record, only_dump, leaks_by_function, stamp):
    # given threads_pass: 4 threads in a ring, each allocating 20000 blocks in
    # produce() that the next thread frees in consume(), so glibc hands freed
    # blocks back to other threads all the time
    # when it runs under the preload
    run = record("threads_pass", env={"MEMREC_STAMP": stamp})
    assert run.returncode == 0, run.describe()
    assert run.stdout == "threads_pass: 80000 blocks freed across threads, 0 bad\n"
    dump = only_dump(run)
    assert_stamped_by(stamp, run, dump["counters"])
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


@pytest.mark.parametrize("stamp", STAMPS)
def test_blocks_handed_between_a_thread_recording_alone_and_another_are_ordered(build, record, only_dump, stamp):
    # given handover_alone: main allocates 1000 blocks while it is the only
    # thread, a new thread frees them first thing, allocates 1000 more and
    # exits, and main frees those once the recorder has retired that thread
    # (the recorder stamps a thread recording alone with its tick, and the
    # others with the counter or the TSC: each handover crosses the switch)
    # when it runs under the preload
    run = record("handover_alone", env={"MEMREC_STAMP": stamp})
    assert run.returncode == 0, run.describe()
    assert run.stdout == "handover_alone: 1000 blocks each way\n"
    dump = only_dump(run)
    assert_stamped_by(stamp, run, dump["counters"])
    assert_consistent(dump)
    # then every free found its block and nothing of the program leaks
    assert dump["heap"]["unmatched_frees"] == 0
    rep = support.only_process(support.report(build, run.dats[0]))
    assert rep["unmatched_frees"] == 0
    assert leaked_by_function(build, rep) == {}
    allocated = sites_by_function(build, rep, "allocated", ("allocations", "leaked_count"))
    assert allocated["fill_blocks"] == (2000, 0)


@pytest.mark.parametrize("stamp", STAMPS)
def test_a_peak_is_not_made_of_blocks_another_thread_had_already_freed(build, record, only_dump, stamp):
    # given peak_handoff: main and a helper thread take turns 20 times, each
    # turn allocating 1 MiB and freeing it before waking the other through a
    # condition variable (which the recorder does not see); main also makes
    # 500 short-lived 64-byte blocks while it holds its 1 MiB
    # when it runs under the preload
    run = record("peak_handoff", env={"MEMREC_STAMP": stamp})
    assert run.returncode == 0, run.describe()
    assert run.stdout == "peak_handoff: 20 rounds\n"
    assert_stamped_by(stamp, run, only_dump(run)["counters"])
    rep = support.only_process(support.report(build, run.dats[0]))
    # then the peak is one 1 MiB block and one small block: the dump orders
    # each free before the allocation the other thread made after it, though
    # only the program's own synchronization relates the two (a cheaper
    # stamp that ordered events by their blocks alone showed 2 MiB here)
    assert rep["peak"]["bytes"] - rep["peak"]["runtime_bytes"] == (1 << 20) + 64
    assert rep["unmatched_frees"] == 0
    assert leaked_by_function(build, rep) == {}


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


def test_main_thread_leaving_first_still_ends_the_dump_cleanly(record, run_plain, only_dump, leaks_by_function):
    # given main_thread_exit: main calls pthread_exit() while two workers go
    # on, each leaking 4040 bytes 100 ms later; the last one ends the process
    # when it runs under the preload
    run = record("main_thread_exit", timeout=20)  # a process kept alive by the writer thread hangs
    plain = run_plain("main_thread_exit")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        0, "main_thread_exit: main leaves first\n")
    # then the dump ends cleanly and has the workers' leaks
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert_leaks(leaks_by_function(dump), {"late_worker_leak": (2, 8080)}, ignore=("main",))


def test_a_thousand_short_lived_threads_are_all_recorded(record, only_dump, leaks_by_function):
    # given many_threads: 1000 threads, 8 at a time, each allocating and
    # freeing 50 blocks; the last one leaks 999 bytes
    # when it runs under the preload
    run = record("many_threads")
    assert run.returncode == 0, run.describe()
    dump = only_dump(run)
    # then every thread's events are there, and only the one leak
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert_leaks(leaks_by_function(dump), {"last_thread_leak": (1, 999)}, ignore=("run_batches",))
    assert dump["counts"]["alloc"] >= 50000
    assert dump["counts"]["free"] >= 50000
    assert dump["heap"]["unmatched_frees"] == 0
    workers = [t for t in dump["threads"] if t["name"] == "many_threads"]
    assert len(workers) >= 1001  # main and the 1000 workers share the program's name
    assert sum(1 for t in workers if t["exit_ns"] is not None) >= 1000


@pytest.mark.parametrize("stamp", STAMPS)
def test_sixty_four_threads_freeing_each_others_blocks_leave_exact_leaks_and_no_unmatched_free(build, record,
                                                                                               only_dump, stamp):
    # given cross_free_threads (scripts/stress runs it with 20000 blocks): 64
    # threads at once, thread i allocating 2000 blocks in produce() that
    # thread (i + 1) % 64 frees in consume(), and leaking 1 x (100000 + i)
    # from leak_per_thread() (0 + 1 + ... + 63 = 2016 bytes over 64 x 100000)
    # when it runs under the preload (half a second on an idle machine)
    run = record("cross_free_threads", "64", "2000", env={"MEMREC_STAMP": stamp})
    assert run.returncode == 0, run.describe()
    assert run.stdout == "cross_free_threads: 64 threads passed 2000 blocks each, 0 bad\n"
    dump = only_dump(run)
    assert_stamped_by(stamp, run, dump["counters"])
    assert dump["clean_end"] is True
    assert_consistent(dump)
    # then every free found the block it frees, though another thread made it
    assert dump["heap"]["unmatched_frees"] == 0
    assert len(dump["threads"]) == 64 + 1
    # and report names every block produce() made, each freed, and only the
    # 64 blocks of leak_per_thread() as leaked
    rep = support.only_process(support.report(build, run.dats[0]))
    assert rep["unmatched_frees"] == 0
    # (block sizes are 16 + ((seq * 7 + i) % 250) * 8: 2000 blocks cycle
    # through all 250 equally, 1012 bytes on average)
    allocated = sites_by_function(build, rep, "allocated", ("allocations", "allocated_bytes", "leaked_count"))
    allocated.pop("main", None)  # pthread_create's thread descriptors: glibc's, sized by its version
    assert allocated == {"produce": (128000, 128000 * 1012, 0), "leak_per_thread": (64, 64 * 100000 + 2016, 64)}
    assert leaked_by_function(build, rep) == {"leak_per_thread": (64, 64 * 100000 + 2016)}


def test_two_thousand_threads_alive_at_once_are_reported_exactly_in_little_memory(build, record, tmp_path):
    # given thread_crowd: 2000 threads alive at once, each making 2000
    # allocations, 1999 of 48 bytes in churn() that it frees at once and one
    # of 1000 bytes in crowd_leak() that it leaks
    # when it runs under the preload with full-size rings from the start
    # (lossy mode's; 4000 events fit a ring, so none is lost): the threads
    # then run far ahead of the writer, which drains them one after another,
    # so each frame waits for older events in the frames after it and the
    # report holds back a good part of the dump (a ring that starts small
    # makes the threads wait for the writer, which holds back much less)
    run = record("thread_crowd", "2000", "2000", env={"MEMREC_LOSSY": "1"})
    assert run.returncode == 0, run.describe()
    assert run.stdout == "thread_crowd: 2000 threads, 2000 allocations each\n"
    assert len(run.dats) == 1, run.describe()
    # and memrec report reads its dump
    doc, peak_rss_kib = support.report_with_peak_rss(build, run.dats[0], tmp_path=tmp_path)
    rep = support.only_process(doc)
    # then every thread and every allocation is there, and only the 2000 leaks
    assert rep["threads"] == 2001
    assert rep["unmatched_frees"] == 0
    allocated = sites_by_function(build, rep, "allocated", ("allocations", "allocated_bytes", "leaked_count"))
    allocated.pop("run_crowd", None)  # pthread_create's thread descriptors: glibc's, sized by its version
    assert allocated == {"churn": (2000 * 1999, 2000 * 1999 * 48, 0), "crowd_leak": (2000, 2000 * 1000, 2000)}
    assert_leaks(leaked_by_function(build, rep), {"crowd_leak": (2000, 2000 * 1000)}, ignore=("run_crowd",))
    # and the report's memory depends neither on the threads alive at once
    # nor on how many events the dump makes it hold back (32 bytes each,
    # past a million of them in a file): once a megabyte or more per thread
    assert peak_rss_kib < 200 * 1024, \
        f"memrec report peaked at {peak_rss_kib} KiB of RSS ({rep['dump']['max_pending_events']} events held back)"


def _peak_rss_kib(argv, env, tmp_path):
    """Runs argv; its exit status, stdout and the most memory it held resident, in KiB."""
    out, err = tmp_path / f"{len(list(tmp_path.iterdir()))}.out", tmp_path / "rss.err"
    code, peak_kib = support.run_with_peak_rss(argv, env, out, err)
    return code, out.read_text(), peak_kib


def test_two_thousand_threads_cost_the_recorder_kilobytes_each(build, tmp_path):
    # given thread_crowd: 2000 threads alive at once, with 64 KiB stacks,
    # each making 20 allocations
    argv = [build.program("thread_crowd"), "2000", "20"]
    plain = _peak_rss_kib(argv, support.clean_env(), tmp_path)
    # when it runs under the preload
    recorded = _peak_rss_kib(argv, support.clean_env({"LD_PRELOAD": str(build.preload),
                                                      "MEMREC_OUTPUT": str(tmp_path / "crowd.dat")}), tmp_path)
    # then it does the same, and the recorder's buffers cost each thread the
    # pages it used (about 40 KiB), not the 560 KiB each was when its buffer
    # was zeroed whole
    assert plain[:2] == recorded[:2] == (0, "thread_crowd: 2000 threads, 20 allocations each\n")
    per_thread_kib = (recorded[2] - plain[2]) / 2000
    assert per_thread_kib < 100, f"{per_thread_kib:.0f} KiB per thread ({plain[2]} KiB plain, {recorded[2]} recorded)"
