"""Dumps that would hold nothing, or frees only, without a word: another
allocator ahead of libmemrec.so in LD_PRELOAD, and a program that takes the
toggle signal over. The preload says the first at start on stderr, and the
dump says both to `memrec info`, `memrec report` and `memrec view`."""
import re
import signal
from pathlib import Path

import pytest

import memrec_support as support
from memrec_support import assert_leaks, memrec_lines
from test_view_api import start_view

LIBDIR = Path("/usr/lib/x86_64-linux-gnu")

STAYED_OFF = ("recording stayed off: the program took over SIGUSR1; "
              "use MEMREC_SIGNAL to pick a signal it leaves alone")
TAKEN_AT = re.compile(r"the program took over SIGUSR1 at (\d+\.\d{3}) s: the toggle no longer worked after that")

# toggle leaks one block in each of its five phases (test_recording_control.py).
TOGGLE_LEAKS = {"leak_on1": (1, 1001), "leak_off1": (1, 1002), "leak_on2": (1, 1003),
                "leak_off2": (1, 1004), "leak_on3": (1, 1005), "move_realloced": (1, 3002)}


def allocator(name: str) -> Path:
    path = LIBDIR / name
    if not path.exists():
        pytest.skip(f"{path} is missing (scripts/setup installs it)")
    return path


def report_text(build, *dats) -> str:
    run = support.memrec_raw(build, ["report", "--no-progress", *dats])
    assert run.returncode == 0, run.describe()
    return run.stdout


def info_text(build, dat) -> str:
    run = support.memrec_raw(build, ["info", dat])
    assert run.returncode == 0, run.describe()
    return run.stdout


@pytest.mark.parametrize("library", ["libtcmalloc.so.4", "libjemalloc.so.2"])
def test_an_allocator_ahead_in_ld_preload_is_said_once_and_noted_in_every_dump(build, record, run_plain, info,
                                                                              library):
    # given fork_child, which forks, both processes allocating and leaking
    # when it runs with another allocator before libmemrec.so in LD_PRELOAD
    preload = f"{allocator(library)} {build.preload}"
    run = record("fork_child", env={"LD_PRELOAD": preload})
    # then the program behaves as without the preload
    plain = run_plain("fork_child", env={"LD_PRELOAD": str(allocator(library))})
    assert (run.returncode, sorted(run.stdout.splitlines())) == (plain.returncode, sorted(plain.stdout.splitlines()))
    assert run.returncode == 0, run.describe()
    # and stderr has one line saying so, once for the two processes
    assert memrec_lines(run.stderr) == [
        f"memrec: the program's malloc is {library}'s, not memrec's: its allocations are not recorded; "
        "put libmemrec.so first in LD_PRELOAD"]
    # and each process's dump, empty of allocations, says why
    assert len(run.dats) == 2, run.describe()
    message = (f"the program's malloc is {library}'s, not memrec's: nothing was recorded; "
               "put libmemrec.so first in LD_PRELOAD")
    for dump in info(*run.dats):
        assert dump["counts"]["alloc"] == 0
        assert dump["counters"]["foreign_malloc"] > 0
        assert dump["notes"] == [{"kind": "foreign_malloc", "message": message, "time_ns": None}]
    # and so do report's JSON and text, for both processes
    doc = support.report(build, *run.dats)
    assert [p["report"]["dump"]["notes"][0]["message"] for p in doc["processes"]] == [message, message]
    assert report_text(build, *run.dats).count(f"note: {message}\n") == 2
    assert f"  note      {message}\n" in info_text(build, run.dats[0])


def test_an_executable_taking_mallocs_address_is_not_mistaken_for_its_owner(build, record, run_plain, only_dump):
    # given Debian's python3, a non-PIC executable that takes &malloc: dlsym
    # then names its PLT entry, in the executable, which defines no malloc
    run = record("/usr/bin/python3", "-c", "print(1)")
    # then nothing is said and its allocations are recorded
    assert (run.returncode, run.stdout, memrec_lines(run.stderr)) == (0, "1\n", []), run.describe()
    assert only_dump(run)["counts"]["alloc"] > 0
    # and with tcmalloc ahead of us, that is still seen through the PLT entry
    tcmalloc = allocator("libtcmalloc.so.4")
    ahead = record("/usr/bin/python3", "-c", "print(1)", env={"LD_PRELOAD": f"{tcmalloc} {build.preload}"})
    plain = run_plain("/usr/bin/python3", "-c", "print(1)", env={"LD_PRELOAD": str(tcmalloc)})
    assert (ahead.returncode, ahead.stdout) == (plain.returncode, plain.stdout) == (0, "1\n")
    assert memrec_lines(ahead.stderr) == [
        "memrec: the program's malloc is libtcmalloc.so.4's, not memrec's: its allocations are not recorded; "
        "put libmemrec.so first in LD_PRELOAD"]


@pytest.mark.parametrize("program", ["jemalloc_prog", "cpp_new_tcmalloc"])
def test_a_program_linked_against_another_allocator_gets_no_note(build, record, only_dump, program):
    # given a program linked (not preloaded) against jemalloc or tcmalloc,
    # whose malloc calls still reach the preload first
    if not (build.programs_dir / program).exists():
        pytest.skip(f"{program} was not built (its allocator's -dev package is missing)")
    # when it runs under the preload alone
    run = record(program)
    assert run.returncode == 0, run.describe()
    # then nothing is said and its allocations are recorded
    assert memrec_lines(run.stderr) == []
    dump = only_dump(run)
    assert dump["notes"] == []
    assert dump["counts"]["alloc"] > 0
    assert "foreign_malloc" not in dump["counters"]


def test_a_program_taking_the_toggle_over_while_recording_starts_off_gives_a_dump_that_says_so(
        build, record, run_plain, only_dump):
    # given toggle, which installs its own SIGUSR1 handler at the start of
    # main, then sends itself SIGUSR1 four times, leaking in each phase
    args = (str(int(signal.SIGUSR1)), "own-handler")
    # when it runs with recording started off
    run = record("toggle", *args, env={"MEMREC_START_DISABLED": "1"})
    # then the program got its signals, as without the preload
    plain = run_plain("toggle", *args)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        0, "toggle: 4 signals sent, 4 handled by the program\n")
    # and nothing is said on stderr while it runs
    assert memrec_lines(run.stderr) == []
    # and the dump, of frees only, says recording stayed off and why
    dump = only_dump(run)
    assert (dump["counts"]["alloc"], dump["counts"]["realloc"]) == (0, 0)
    assert dump["counts"]["free"] > 0
    assert [n["kind"] for n in dump["notes"]] == ["recording_stayed_off"]
    assert dump["notes"][0]["message"] == STAYED_OFF
    assert dump["notes"][0]["time_ns"] >= 0
    assert f"  note      {STAYED_OFF}\n" in info_text(build, run.dats[0])
    assert f"note: {STAYED_OFF}\n" in report_text(build, *run.dats)
    rep = support.only_process(support.report(build, *run.dats))
    assert rep["dump"]["notes"] == dump["notes"]


def test_a_program_taking_the_toggle_over_while_recording_gets_the_softer_note(build, record, run_plain, only_dump,
                                                                               leaks_by_function):
    # given toggle with its own SIGUSR1 handler
    args = (str(int(signal.SIGUSR1)), "own-handler")
    # when it runs with recording on
    run = record("toggle", *args)
    plain = run_plain("toggle", *args)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout)
    # then every phase was recorded, the signals never reaching the recorder
    dump = only_dump(run)
    assert dump["recording"] == []
    assert_leaks(leaks_by_function(dump), TOGGLE_LEAKS)
    # and the dump says from when the toggle no longer worked
    assert [n["kind"] for n in dump["notes"]] == ["toggle_taken_over"]
    note = dump["notes"][0]
    match = TAKEN_AT.fullmatch(note["message"])
    assert match, note["message"]
    assert match.group(1) == f"{note['time_ns'] / 1e9:.3f}"
    assert f"note: {note['message']}\n" in report_text(build, *run.dats)


def test_a_program_handler_that_passes_the_toggle_on_gets_no_note(record, run_plain, only_dump):
    # given toggle with a SIGUSR1 handler that calls the one it replaced
    args = (str(int(signal.SIGUSR1)), "chain-handler")
    # when it runs under the preload
    run = record("toggle", *args)
    # then its handler saw every signal, as without the preload
    plain = run_plain("toggle", *args)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        0, "toggle: 4 signals sent, 4 handled by the program\n")
    # and the recorder's, called by it, toggled recording each time
    dump = only_dump(run)
    assert [r["on"] for r in dump["recording"]] == [False, True, False, True]
    assert dump["counters"]["toggle_chained"] == 4
    assert dump["counters"]["toggle_taken_ns"] > 0
    # so the toggle worked, and there is nothing to note
    assert dump["notes"] == []


def test_a_toggle_signal_the_program_leaves_alone_gets_no_note(record, only_dump, leaks_by_function):
    # given toggle, which takes SIGUSR1 over and sends itself SIGUSR1
    # when the recorder toggles on SIGUSR2 instead, as the note advises
    run = record("toggle", str(int(signal.SIGUSR1)), "own-handler", env={"MEMREC_SIGNAL": "USR2"})
    assert run.returncode == 0, run.describe()
    # then nothing is noted, and every phase was recorded
    dump = only_dump(run)
    assert dump["notes"] == []
    assert "toggle_taken_ns" not in dump["counters"]
    assert_leaks(leaks_by_function(dump), TOGGLE_LEAKS)


def test_a_handler_installed_before_the_recorder_is_noted_too(record, only_dump):
    # given early_handlers, whose library installs SIGUSR1's handler before
    # the recorder's constructor, which then leaves the signal alone
    run = record("early_handlers")
    assert run.returncode == 0, run.describe()
    # then the dump says the toggle never worked
    dump = only_dump(run)
    assert [n["kind"] for n in dump["notes"]] == ["toggle_taken_over"]


def test_an_ordinary_run_has_no_notes(record, only_dump):
    # given leak_three, which leaves every signal alone
    run = record("leak_three")
    assert run.returncode == 0, run.describe()
    # then nothing is said, on stderr or in the dump
    assert memrec_lines(run.stderr) == []
    dump = only_dump(run)
    assert dump["notes"] == []
    assert not {"foreign_malloc", "toggle_taken_ns", "toggle_chained"} & dump["counters"].keys()


def test_the_view_summary_carries_the_notes(build, record):
    # given the dump of a run with tcmalloc ahead of the preload
    run = record("leak_three", env={"LD_PRELOAD": f"{allocator('libtcmalloc.so.4')} {build.preload}"})
    assert len(run.dats) == 1, run.describe()
    # when memrec view serves it
    view = start_view(build, run.dats)
    try:
        summary = view.json("/api/dumps/0/summary")
    finally:
        support.kill_tree(view.proc)
        view.proc.communicate()
    # then the overview's summary has the note the report has
    assert [n["kind"] for n in summary["dump"]["notes"]] == ["foreign_malloc"]
