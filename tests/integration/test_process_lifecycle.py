"""A process's life under the preload: fork, exec, fatal signals, _exit and
SIGKILL. Every way a process can end must leave a dump that reads."""
import os
import signal
import time

import pytest

import memrec_support as support
from memrec_support import assert_consistent, assert_leaks, dump_of_exe


def exe_name(dump):
    return os.path.basename(dump["header"]["exe"])


def dumps_of(info, run):
    assert run.dats, f"no dump written\n{run.describe()}"
    result = info(*run.dats)
    return result if isinstance(result, list) else [result]


@pytest.mark.parametrize("mode", ["quiet", "busy"])
def test_fork_child_records_into_its_own_file(record, info, leaks_by_function, mode):
    # given fork_child: the parent leaks 1234 before fork() and 2 x 3000 after
    # it, the child 3 x 2000; in "busy" mode two threads allocate in a loop
    # while the parent forks
    # when it runs under the preload
    run = record("fork_child", *([mode] if mode == "busy" else []))
    assert run.returncode == 0, run.describe()
    assert run.stdout.splitlines() == [
        "fork_child: child leaked 3 x 2000",
        "fork_child: parent leaked 1234 + 2 x 3000, child exited 0",
    ]
    # then there are two dumps, and `memrec info` of both prints one array
    assert len(run.dats) == 2, run.describe()
    dumps = dumps_of(info, run)
    assert len(dumps) == 2
    parents = [d for d in dumps if d["header"]["pid"] == run.pid]
    children = [d for d in dumps if d["header"]["pid"] != run.pid]
    assert len(parents) == 1 and len(children) == 1
    parent, child = parents[0], children[0]
    # and the child's header names the parent, and each has its own leaks
    assert child["header"]["ppid"] == run.pid
    for dump in (parent, child):
        assert dump["clean_end"] is True
        assert_consistent(dump)
    # main starts the busy threads: pthread_create's blocks may stay with glibc
    ignore = ("main",) if mode == "busy" else ()
    assert_leaks(leaks_by_function(parent), {"before_fork_leak": (1, 1234), "parent_leak": (2, 6000)}, ignore)
    child_leaks = leaks_by_function(child)
    # whether the child's dump starts empty or carries the heap it inherited
    # is the preload's choice; what it did after the fork is exact
    child_leaks.pop("before_fork_leak", None)
    assert_leaks(child_leaks, {"child_leak": (3, 6000)}, ignore)


@pytest.mark.parametrize("mode", ["fork", "vfork", "spawn", "system"])
def test_exec_in_a_child_records_the_new_program_into_its_own_file(record, info, leaks_by_function, mode):
    # given fork_exec, which leaks 999 and starts leak_three as a child by
    # fork+exec, vfork+exec, posix_spawn or system()
    # when it runs under the preload
    run = record("fork_exec", mode)
    assert run.returncode == 0, run.describe()
    assert run.stdout.splitlines() == ["leak_three: leaked 3 x 4242", f"fork_exec: {mode} child exited 0"]
    dumps = dumps_of(info, run)
    # then leak_three's dump exists, with its parent's pid and its own leak
    children = dump_of_exe(dumps, "leak_three")
    assert len(children) == 1, [d["header"]["exe"] for d in dumps]
    child = children[0]
    assert child["clean_end"] is True
    assert_leaks(leaks_by_function(child), {"leak_here": (3, 3 * 4242)})
    if mode != "system":  # with system() the parent is /bin/sh
        assert child["header"]["ppid"] == run.pid
    assert child["header"]["cmdline"][1:] == []
    # and the parent's dump has the parent's leak
    parents = [d for d in dumps if d["header"]["pid"] == run.pid and exe_name(d) == "fork_exec"]
    assert len(parents) == 1
    assert_leaks(leaks_by_function(parents[0]), {"parent_before_exec": (1, 999)})


@pytest.mark.parametrize("mode", ["fork", "spawn", "system"])
def test_follow_exec_0_leaves_exec_children_unrecorded(record, info, mode):
    # given fork_exec, which starts leak_three as a child
    # when it runs with MEMREC_FOLLOW_EXEC=0
    run = record("fork_exec", mode, env={"MEMREC_FOLLOW_EXEC": "0"})
    # then the child still runs
    assert run.returncode == 0, run.describe()
    assert "leak_three: leaked 3 x 4242" in run.stdout
    # and no dump of leak_three (nor of /bin/sh) is written, but the parent's is
    dumps = dumps_of(info, run)
    assert dump_of_exe(dumps, "leak_three") == []
    assert all(exe_name(d) == "fork_exec" for d in dumps), [d["header"]["exe"] for d in dumps]
    assert any(d["header"]["pid"] == run.pid for d in dumps)


def test_exec_without_fork_flushes_the_old_image_into_its_own_file(record, info, leaks_by_function):
    # given exec_replace, which leaks 6006 and then execv()s leak_three in place
    # when it runs under the preload
    run = record("exec_replace")
    assert run.returncode == 0, run.describe()
    assert run.stdout == "exec_replace: leaked 6006, now exec\nleak_three: leaked 3 x 4242\n"
    # then the same pid has two dumps: the old image's and the new one's
    dumps = dumps_of(info, run)
    assert all(d["header"]["pid"] == run.pid for d in dumps)
    before = dump_of_exe(dumps, "exec_replace")
    after = dump_of_exe(dumps, "leak_three")
    assert len(before) == 1 and len(after) == 1, [d["header"]["exe"] for d in dumps]
    assert_leaks(leaks_by_function(before[0]), {"leak_before_exec": (1, 6006)})
    assert_leaks(leaks_by_function(after[0]), {"leak_here": (3, 3 * 4242)})
    assert after[0]["clean_end"] is True
    assert after[0]["ended_by_exec"] is False
    # and the old image's dump ended by exec of leak_three, not killed
    assert (before[0]["clean_end"], before[0]["truncated_at"]) == (False, None)
    assert before[0]["ended_by_exec"] is True
    assert os.path.basename(before[0]["exec_path"]) == "leak_three"


def test_a_failed_exec_is_noted_and_the_recording_goes_on(record, run_plain, only_dump, leaks_by_function):
    # given exec_replace fail: leaks 6006, execv()s a path that does not
    # exist (it returns -1, ENOENT), leaks 7007 and exits 0
    # when it runs under the preload
    run = record("exec_replace", "fail")
    # then the program sees the same failure as without the preload
    plain = run_plain("exec_replace", "fail")
    assert plain.returncode == 0, plain.describe()
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    assert "exec failed: -1 No such file or directory" in run.stdout
    # and its one dump ended cleanly, not by exec, with the events on both
    # sides of the failed exec
    dump = only_dump(run)
    assert (dump["clean_end"], dump["ended_by_exec"], dump["exec_path"]) == (True, False, None)
    assert_consistent(dump)
    assert_leaks(leaks_by_function(dump), {"leak_before_exec": (1, 6006), "leak_after_failed_exec": (1, 7007)})


@pytest.mark.parametrize("name", ["TERM", "INT", "HUP"])
def test_fatal_signal_flushes_every_thread_and_still_kills(record, run_plain, only_dump, leaks_by_function,
                                                            name):
    # given fatal_signal: the main thread leaks 5005, a blocked second thread
    # 10 x 100, then the process raises SIGTERM, SIGINT or SIGHUP unhandled
    signo = getattr(signal, "SIG" + name)
    # (an ignored signal stays ignored across exec: under a launcher such as
    # nohup the program would survive its SIGHUP, with or without the preload)
    inherited = signal.getsignal(signo)
    if inherited == signal.SIG_IGN:
        signal.signal(signo, signal.SIG_DFL)
    try:
        # when it runs under the preload
        run = record("fatal_signal", name)
        # then it still dies by that signal, as it does without the preload
        plain = run_plain("fatal_signal", name)
    finally:
        if inherited == signal.SIG_IGN:
            signal.signal(signo, signal.SIG_IGN)
    assert plain.returncode == -signo
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    # and the dump is complete, with both threads' leaks
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert_leaks(leaks_by_function(dump), {"leak_before_signal": (1, 5005), "worker_leak": (10, 1000)},
                 ignore=("main",))  # main calls pthread_create


@pytest.mark.parametrize("mode", ["chain", "restore"])
def test_a_handler_that_chains_to_the_preloads_keeps_the_programs_fate(record, run_plain, only_dump,
                                                                        leaks_by_function, mode):
    # given signal_chain: leaks 7007, installs SIGTERM (sa_handler) and SIGINT
    # (SA_SIGINFO) handlers that call the `prev` sigaction returned unless it
    # is SIG_DFL or SIG_IGN (under the preload prev is the preload's handler),
    # raises both, leaks 8008; with "restore" it then puts SIGTERM's prev back
    # and raises SIGTERM again
    # when it runs under the preload and without it
    run = record("signal_chain", *([mode] if mode == "restore" else []))
    plain = run_plain("signal_chain", *([mode] if mode == "restore" else []))
    # then the exit and the output are the same: chained to, the preload's
    # handler returns; restored, it dies of the signal as SIG_DFL would
    assert plain.returncode == (0 if mode == "chain" else -signal.SIGTERM), plain.describe()
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    assert run.stdout.startswith("signal_chain: SIGTERM x 1, SIGINT x 1, still alive\n")
    # and the dump is complete, with the leaks before and after the signals
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert_leaks(leaks_by_function(dump), {"leak_before_signals": (1, 7007), "leak_after_signals": (1, 8008)})


def test_underscore_exit_flushes_every_thread_and_keeps_the_exit_code(record, run_plain, only_dump,
                                                                      leaks_by_function):
    # given underscore_exit: leaks 3030 on the main thread and 10 x 100 on a
    # blocked second thread, then calls _exit(3)
    # when it runs under the preload
    run = record("underscore_exit")
    # then it exits 3 as without the preload
    plain = run_plain("underscore_exit")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (3, plain.stdout)
    assert run.returncode == 3
    # and the dump is complete, with both threads' leaks
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert_leaks(leaks_by_function(dump), {"leak_then_exit": (1, 3030), "worker_leak": (10, 1000)},
                 ignore=("main",))


def test_sigkill_leaves_a_dump_that_reads_up_to_the_last_second(build, preload, memrec_cli, tmp_path):
    # given sigkill_loop: four threads allocating without end, and progress
    # markers "marker <monotonic ns> <allocations so far>" every 100 ms
    out_dir = support.fresh_dir(tmp_path, "memrec-out")
    env = support.clean_env({"LD_PRELOAD": str(preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat")})
    argv = [str(build.program("sigkill_loop"))]
    proc = support.start(argv, env, cwd=out_dir)
    try:
        time.sleep(3.0)
        # when it is killed with SIGKILL after 3 s
        killed_at_ns = time.monotonic_ns()
        os.kill(proc.pid, signal.SIGKILL)
        run = support.finish(proc, argv, support.TIMEOUT_S)
    finally:
        support.kill_tree(proc)
    assert run.returncode == -signal.SIGKILL
    markers = [tuple(map(int, line.split()[1:])) for line in run.stdout.splitlines() if line.startswith("marker ")]
    # then the dump reads: `memrec info` exits 0 and says the end is missing
    dats = sorted(out_dir.iterdir())
    assert len(dats) == 1, dats
    raw = support.memrec_info_raw(build, dats)
    assert raw.returncode == 0, raw.describe()
    dump = support.info(build, dats[0])
    assert dump["clean_end"] is False
    assert dump["frames"] >= 1
    # and it has every allocation made more than 1.5 s before the kill (the
    # recorder writes a frame at least once a second)
    old_enough = [count for when_ns, count in markers if when_ns <= killed_at_ns - 1_500_000_000]
    assert old_enough, f"no marker 1.5 s before the kill: {markers}"
    assert dump["counts"]["alloc"] >= old_enough[-1], (dump["counts"], markers)
    assert dump["counts"]["alloc"] > 0


def fork_storm_dumps(record, info, mode):
    """Runs `fork_storm 50 MODE` under the preload; returns the run and the
    info of each of its dumps by pid and program arguments."""
    run = record("fork_storm", "50", mode, timeout=120)  # about a second on an idle machine
    assert run.returncode == 0, run.describe()
    assert run.stdout == f"fork_storm: 50 {mode} children, 0 failed\n"
    return run, dumps_of(info, run)


def assert_parent_exact(leaks_by_function, parents):
    """The parent's one dump: ended cleanly, every free matched, and its only
    leak parent_leak's 1 x 555."""
    assert len(parents) == 1, [d["file"] for d in parents]
    (parent,) = parents
    assert parent["clean_end"] is True
    assert parent["heap"]["unmatched_frees"] == 0
    assert_consistent(parent)
    # main starts the busy thread: glibc may keep its thread descriptor
    assert_leaks(leaks_by_function(parent), {"parent_leak": (1, 555)}, ignore=("main",))


def test_fifty_forks_without_exec_leave_one_dump_per_child_with_its_exact_leak(record, info, leaks_by_function):
    # given fork_storm: while a thread allocates and frees without pause, the
    # parent leaks 1 x 555 and forks 50 children (8 at a time), each leaking
    # 1 x 777 from child_leak and making and freeing 100 more blocks, half of
    # them leaving by exit(), half by _exit()
    # when it runs under the preload
    run, dumps = fork_storm_dumps(record, info, "fork")
    # then there is one dump per process: the parent's and 50 children's
    parents = [d for d in dumps if d["header"]["pid"] == run.pid]
    children = [d for d in dumps if d["header"]["pid"] != run.pid]
    assert len(dumps) == 51
    assert len({d["header"]["pid"] for d in children}) == 50
    assert_parent_exact(leaks_by_function, parents)
    # and each child's dump ended cleanly and holds exactly what the child did
    # after the fork (its dump starts empty: the heap it inherited is the
    # parent's): 101 blocks, 100 freed, child_leak's 777 bytes live
    for child in children:
        context = child["file"]
        assert child["header"]["ppid"] == run.pid, context
        assert child["clean_end"] is True, context
        assert (child["counts"]["alloc"], child["counts"]["free"]) == (101, 100), context
        assert (child["heap"]["live_count"], child["heap"]["live_bytes"]) == (1, 777), context
        assert child["heap"]["unmatched_frees"] == 0, context
        assert leaks_by_function(child) == {"child_leak": (1, 777)}, context


def test_fifty_forks_with_exec_leave_one_dump_per_image_with_its_exact_leak(record, info, leaks_by_function):
    # given fork_storm: while a thread allocates and frees without pause, the
    # parent leaks 1 x 555 and forks 50 children (8 at a time), each of which
    # execs `fork_storm child` at once, which leaks 1 x 888 from exec_leak
    # when it runs under the preload
    run, dumps = fork_storm_dumps(record, info, "exec")
    # then there is the parent's dump, and for each child pid two: the forked
    # image's, written out at the exec, and the exec'd program's
    parents = [d for d in dumps if d["header"]["pid"] == run.pid]
    forked = [d for d in dumps if d["header"]["pid"] != run.pid and d["header"]["cmdline"][1:] == ["50", "exec"]]
    execd = [d for d in dumps if d["header"]["cmdline"][1:] == ["child"]]
    assert len(dumps) == 1 + 50 + 50
    assert_parent_exact(leaks_by_function, parents)
    child_pids = sorted(d["header"]["pid"] for d in execd)
    assert len(set(child_pids)) == 50
    assert sorted(d["header"]["pid"] for d in forked) == child_pids
    # and the forked image recorded nothing between fork and exec; its dump
    # has no End (an exec may fail and the recording go on) but ended by exec
    for image in forked:
        context = image["file"]
        assert image["header"]["ppid"] == run.pid, context
        assert (image["counts"]["alloc"], image["counts"]["free"]) == (0, 0), context
        assert (image["clean_end"], image["truncated_at"]) == (False, None), context
        assert image["ended_by_exec"] is True, context
    # and each exec'd program's dump ended cleanly with exec_leak's one block
    for child in execd:
        context = child["file"]
        assert child["header"]["ppid"] == run.pid, context
        assert child["clean_end"] is True, context
        assert (child["counts"]["alloc"], child["counts"]["free"]) == (1, 0), context
        assert child["heap"]["unmatched_frees"] == 0, context
        assert leaks_by_function(child) == {"exec_leak": (1, 888)}, context
