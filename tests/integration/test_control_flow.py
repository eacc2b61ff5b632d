"""Control flow that leaves frames without returning, or enters them from
nowhere: C++ exceptions and longjmp() through allocating frames, signal
handlers that allocate, a library loaded and unloaded in a loop. Each
program knows its leaks exactly, and the dump must say the same.
(Recursion deeper than the stack limit: test_stacks_and_modules.py.)"""
import os

import memrec_support as support
from memrec_support import assert_consistent, assert_leaks


def test_exceptions_through_allocating_frames_leak_exactly_what_was_not_owned(record, only_dump,
                                                                              leaks_by_function):
    # given throw_through: 200 exceptions thrown through 12 frames that own
    # blocks (freed by the unwinding), one of them catching and rethrowing,
    # 4 of them leaking 300 + level bytes
    # when it runs under the preload
    run = record("throw_through", "200")
    assert run.returncode == 0, run.describe()
    assert run.stdout == f"throw_through: 200 caught, {200 * 87} message bytes\n"
    # then only the raw leaks remain: every owned block, exception object and
    # message was freed
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert dump["heap"]["unmatched_frees"] == 0
    assert_leaks(leaks_by_function(dump), {"leak_in_frame": (4 * 200, 1218 * 200)})


def test_longjmp_over_allocating_frames_leaks_the_blocks_they_did_not_free(record, only_dump, leaks_by_function):
    # given longjmp_frames: 200 rounds of 10 frames allocating 100 + level
    # bytes each, left by (sig)longjmp from the deepest frame or from a signal
    # handler there; main frees the even levels' blocks
    # when it runs under the preload
    run = record("longjmp_frames", "200")
    assert run.returncode == 0, run.describe()
    assert run.stdout == "longjmp_frames: 150 jumps from the deepest frame, 50 from a signal handler\n"
    # then the odd levels' blocks leak, 5 a round, 525 bytes a round
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    assert dump["heap"]["unmatched_frees"] == 0
    assert_leaks(leaks_by_function(dump), {"frame_alloc": (5 * 200, 525 * 200)})


def test_signal_handlers_that_allocate_are_recorded_or_counted_as_missed(build, record, only_dump,
                                                                         leaks_by_function):
    # given signal_alloc: 100 signals while the main thread waits outside any
    # hook, then 100 while it maps and unmaps pages (so a signal may land
    # inside the recorder's own mmap hook); each handler leaks 1 x 2024
    # when it runs under the preload
    run = record("signal_alloc", "100")
    assert run.returncode == 0, run.describe()
    assert run.stdout == "signal_alloc: 200 signals handled\n"
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_consistent(dump)
    leaks = leaks_by_function(dump)
    # then every handler's allocation outside a hook is recorded, with its
    # stack unwound through the signal frame into main
    assert leaks.pop("leak_while_quiet") == (100, 100 * 2024)
    for leak in dump["leaks"]:
        if support.innermost_test_function(build, leak) == "leak_while_quiet":
            names = [support.function_of(f) for f in leak["frames"] if build.is_test_module(f.get("module"))]
            assert names[:2] == ["leak_while_quiet", "on_signal"] and "main" in names, names
    # and one that interrupted a hook is passed through and counted as missed:
    # recorded + missed is exactly the number of signals
    busy_count, busy_bytes = leaks.pop("leak_while_busy", (0, 0))
    missed = dump["counters"]["missed_reentrant"]
    assert busy_count + missed == 100 and busy_bytes == busy_count * 2024, (busy_count, missed)
    assert_leaks(leaks, {}, ignore=("main",))  # main calls pthread_create


def test_a_library_loaded_and_unloaded_in_a_loop_keeps_its_leaks_named(build, record, info):
    # given dlopen_loop: 100 rounds of dlopen, lib_leak() (1 x 3333), dlclose
    # of libtest_alloc.so, whose constructor leaks 1 x 4444, with mappings
    # left where it was now and then
    # when it runs under the preload
    run = record("dlopen_loop", "100")
    assert run.returncode == 0, run.describe()
    assert run.stdout == "dlopen_loop: 100 rounds\n"
    # then the report names both leaks of every round in the library, although
    # it is unloaded (glibc 2.36's dlopen keeps blocks of ld.so's, which count
    # for load_call_close)
    assert len(run.dats) == 1, run.describe()
    rep = support.only_process(support.report(build, run.dats[0]))
    assert rep["dump"]["complete"] is True
    leaked = support.leaked_by_function(build, rep)
    leaked.pop("load_call_close", None)
    assert leaked == {"lib_leak": (100, 100 * 3333), "lib_ctor_leak": (100, 100 * 4444)}
    # and every load of the library is a module that was unloaded
    library = os.path.realpath(build.programs_dir / "libtest_alloc.so")
    loads = [m for m in info(run.dats[0])["modules"] if m["path"] and os.path.realpath(m["path"]) == library]
    assert 1 <= len(loads) <= 100
    assert all(m["unload_gen"] is not None and m["unload_gen"] > m["load_gen"] for m in loads), loads
