"""Pausing and resuming the recording with a signal, and starting paused."""
import signal

import pytest

from memrec_support import assert_leaks

# toggle leaks 1001 + i in phase i: on1, off1, on2, off2, on3 (named for the
# default, where recording starts on and each signal flips it).
LEAKS = {
    "leak_on1": (1, 1001),
    "leak_off1": (1, 1002),
    "leak_on2": (1, 1003),
    "leak_off2": (1, 1004),
    "leak_on3": (1, 1005),
}


def pick(*names, **extra):
    return {**{name: LEAKS[name] for name in names}, **extra}


@pytest.mark.parametrize("memrec_signal,signo", [
    (None, signal.SIGUSR1),
    ("USR2", signal.SIGUSR2),
    (str(int(signal.SIGUSR2)), signal.SIGUSR2),
], ids=["default-SIGUSR1", "USR2-by-name", "USR2-by-number"])
def test_signal_pauses_and_resumes_recording(record, only_dump, leaks_by_function, memrec_signal, signo):
    # given toggle, which sends itself the signal 4 times (off, on, off, on)
    # and leaks a block in each of the 5 phases; in phase on1 it allocates two
    # blocks that it frees / reallocs to 3002 bytes in phase off1
    env = {"MEMREC_SIGNAL": memrec_signal} if memrec_signal else {}
    # when it runs under the preload, which takes that signal
    run = record("toggle", str(int(signo)), env=env)
    assert run.returncode == 0, run.describe()
    assert run.stdout == "toggle: 4 signals sent, 0 handled by the program\n"
    dump = only_dump(run)
    # then only the phases that were recording leak; the block freed while
    # paused is no false leak, nor is the realloc made while paused
    assert_leaks(leaks_by_function(dump), pick("leak_on1", "leak_on2", "leak_on3"))
    # and the pauses are in the dump
    assert [r["on"] for r in dump["recording"]] == [False, True, False, True]
    assert [r["source"] for r in dump["recording"]] == ["signal"] * 4
    assert dump["counts"]["recording_toggles"] == 4
    times = [r["time_ns"] for r in dump["recording"]]
    assert times == sorted(times)


def test_start_disabled_records_only_after_the_first_signal(record, only_dump, leaks_by_function):
    # given toggle (4 signals, a leak in each of 5 phases)
    # when it runs with MEMREC_START_DISABLED=1
    run = record("toggle", env={"MEMREC_START_DISABLED": "1"})
    assert run.returncode == 0, run.describe()
    dump = only_dump(run)
    # then the phases are reversed: only off1 and off2 are recorded, and so is
    # the realloc in off1 of a block allocated (unrecorded) in on1
    assert_leaks(leaks_by_function(dump), pick("leak_off1", "leak_off2", move_realloced=(1, 3002)))
    # and the dump shows recording resumed and paused twice (maybe after an
    # initial "paused" mark)
    states = [r["on"] for r in dump["recording"]]
    assert states[-4:] == [True, False, True, False]
    assert states[:-4] in ([], [False])
    # the initial pause noted as the recorder's own start, the others as the signal's
    assert [r["source"] for r in dump["recording"]] == ["start"] * len(states[:-4]) + ["signal"] * 4


def test_signal_none_leaves_the_signal_to_the_program(record, run_plain, only_dump, leaks_by_function):
    # given toggle with its own SIGUSR1 handler
    # when it runs with MEMREC_SIGNAL=none
    run = record("toggle", str(int(signal.SIGUSR1)), "own-handler", env={"MEMREC_SIGNAL": "none"})
    # then the program's handler gets all 4 signals, as without the preload
    plain = run_plain("toggle", str(int(signal.SIGUSR1)), "own-handler")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        0, "toggle: 4 signals sent, 4 handled by the program\n")
    # and recording never paused
    dump = only_dump(run)
    assert_leaks(leaks_by_function(dump), pick(*LEAKS, move_realloced=(1, 3002)))
    assert dump["recording"] == []


def test_handlers_installed_before_the_recorder_keep_their_signals(record, run_plain, only_dump,
                                                                   leaks_by_function):
    # given early_handlers, whose library installs the program's own SIGUSR1
    # and SIGTERM handlers before the recorder's constructor runs
    # when it raises each signal twice under the preload
    run = record("early_handlers")
    # then its handlers got all four, as without the preload, and it goes on
    plain = run_plain("early_handlers")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        0, "early_handlers: SIGUSR1 x 2, SIGTERM x 2\n")
    # and recording never paused, nor stopped at the SIGTERMs
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert dump["recording"] == []
    assert_leaks(leaks_by_function(dump), {"leak_after_signals": (1, 6060)})


def test_an_inherited_ignored_signal_stays_ignored(record, run_plain, only_dump, leaks_by_function):
    # given fatal_signal HUP started with SIGHUP ignored, as under nohup
    def ignore_sighup():
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    # when it raises SIGHUP under the preload
    run = record("fatal_signal", "HUP", preexec_fn=ignore_sighup)
    # then the signal is still ignored: the program goes on and exits 1, as
    # without the preload
    plain = run_plain("fatal_signal", "HUP", preexec_fn=ignore_sighup)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        1, "fatal_signal: raising SIGHUP\nfatal_signal: still alive\n")
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_leaks(leaks_by_function(dump), {"leak_before_signal": (1, 5005), "worker_leak": (10, 1000)},
                 ignore=("main",))
