"""Markers and the control channel: memrec_mark() from a program (looked up
with dlsym, so it runs without memrec too), `memrec ctl PID
start|stop|status|mark`, and ranges given as mark:LABEL."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

import memrec_support as support
from memrec_support import only_process, ranked_sites, site_function

# ---- memrec_mark() ----------------------------------------------------------

PHASE_BYTES = {"phase_one": 10 * 1000, "phase_two": 7 * 3000, "phase_three": 5 * 5000}


def test_the_program_runs_the_same_without_memrec(record, run_plain):
    # given marker_phases, which looks memrec_mark up with dlsym
    plain = run_plain("marker_phases")
    run = record("marker_phases")
    # then without the preload dlsym finds nothing and it runs on; with it, it finds it
    assert (plain.returncode, plain.stdout) == (0, "marker_phases: memrec_mark absent; phases 10000 21000 25000 bytes\n")
    assert (run.returncode, run.stdout) == (0, "marker_phases: memrec_mark found; phases 10000 21000 25000 bytes\n")
    assert run.stderr == plain.stderr == ""


def test_markers_are_listed_with_their_time_and_source(build, record, info):
    run = record("marker_phases")
    assert run.returncode == 0, run.describe()
    dump = info(run.dats[0])
    assert [(m["label"], m["source"]) for m in dump["markers"]] == [("a", "api"), ("b", "api"), ("b", "api")]
    times = [m["time_ns"] for m in dump["markers"]]
    assert times == sorted(times) and len(set(times)) == 3
    rep = only_process(support.report(build, run.dats[0]))
    assert [(m["label"], m["source"]) for m in rep["markers"]] == [("a", "api"), ("b", "api"), ("b", "api")]
    assert rep["markers"][0]["time_ns"] == times[0] - dump["header"]["start_mono_ns"]
    text = support.memrec_raw(build, ["report", run.dats[0]])
    assert text.returncode == 0, text.describe()
    assert re.search(r"^markers: 'a' at \d+\.\d{3} s \(api\), 'b' at .* \(api\), 'b' at .* \(api\)$", text.stdout,
                     re.M), text.stdout
    info_text = support.memrec_raw(build, ["info", run.dats[0]])
    assert re.search(r"^  marker    'a' .*\(api\)$", info_text.stdout, re.M), info_text.stdout


def _allocated_by_function(build, rep):
    return {site_function(build, s): (s["allocations"], s["allocated_bytes"])
            for s in ranked_sites(rep, "allocated")}


@pytest.mark.parametrize("bounds,expected", [
    (["--from", "mark:a", "--to", "mark:b"], {"phase_two": (7, 21000)}),
    (["--to", "mark:a"], {"phase_one": (10, 10000)}),
    (["--from", "mark:b"], {"phase_three": (5, 25000)}),
    (["--from", "mark:b#2"], {}),
    (["--from", "mark:a", "--to", "mark:b#2"], {"phase_two": (7, 21000), "phase_three": (5, 25000)}),
], ids=["a-to-b", "to-a", "from-b", "from-second-b", "a-to-second-b"])
def test_a_range_between_markers_counts_exactly_the_allocations_between_the_calls(build, record, bounds, expected):
    # given marker_phases: 10 x 1000, mark a, 7 x 3000, mark b, 5 x 5000, mark b
    run = record("marker_phases")
    assert run.returncode == 0, run.describe()
    # when its report is restricted to a range named by markers
    rep = only_process(support.report(build, run.dats[0], args=bounds))
    # then it holds exactly the phases between them
    by_function = {f: v for f, v in _allocated_by_function(build, rep).items() if f in PHASE_BYTES}
    assert by_function == expected
    assert rep["allocated_bytes"] >= sum(b for _, b in expected.values())
    assert rep["window"]["from_ns"] <= rep["window"]["to_ns"] if rep["window"]["to_ns"] is not None else True


def test_diff_and_export_take_marker_ranges(build, record, tmp_path):
    run = record("marker_phases")
    dat = run.dats[0]
    # diff of one dump's two ranges: phase two, then phase three
    diff = support.memrec_raw(build, ["diff", "--json", dat, "--from", "mark:a", "--to", "mark:b",
                                      "--from", "mark:b", "--to", "mark:b#2"])
    assert diff.returncode == 0, diff.describe()
    sites = {s["label"]: s for s in support.diff_sites(json.loads(diff.stdout))}
    assert sites["phase_two"]["base"]["allocated_bytes"] == 21000
    assert sites["phase_two"]["new"]["allocated_bytes"] == 0
    assert sites["phase_three"]["new"]["allocated_bytes"] == 25000
    # export of a marker range
    out = tmp_path / "phase_two.folded"
    exported = support.memrec_raw(build, ["export", "--format", "collapsed", "--metric", "allocated", "--from",
                                          "mark:a", "--to", "mark:b", "-o", out, dat])
    assert exported.returncode == 0, exported.describe()
    lines = [line for line in out.read_text().splitlines() if "phase_" in line]
    assert len(lines) == 1 and "phase_two" in lines[0] and lines[0].endswith(" 21000"), lines


def test_an_unknown_marker_is_an_error_naming_the_known_ones(build, record):
    run = record("marker_phases")
    bad = support.memrec_raw(build, ["report", "--from", "mark:nope", run.dats[0]])
    assert bad.returncode == 1
    assert f"{run.dats[0]}: no marker 'nope'; its markers are 'a', 'b'" in bad.stderr, bad.stderr
    third = support.memrec_raw(build, ["report", "--from", "mark:b#3", run.dats[0]])
    assert third.returncode == 1
    assert "marker 'b' occurs 2 times; mark:b#3 asks for occurrence 3" in third.stderr, third.stderr
    backwards = support.memrec_raw(build, ["report", "--from", "mark:b", "--to", "mark:a", run.dats[0]])
    assert backwards.returncode == 1
    assert "the range ends before it starts" in backwards.stderr, backwards.stderr
    empty = support.memrec_raw(build, ["report", "--from", "mark:", run.dats[0]])
    assert empty.returncode == 1 and "mark: needs a marker's label" in empty.stderr, empty.stderr


# ---- memrec ctl ---------------------------------------------------------------

def test_ctl_stops_starts_and_marks_a_program_that_owns_sigusr1(build, tmp_path):
    # given ctl_target, whose own SIGUSR1 handler counts the signals it gets
    target = support.Driven(build, tmp_path)
    try:
        pid, status = target.listening()
        assert re.fullmatch(rf"recording, pid {pid}, dump {re.escape(str(target.out_dir))}/ctl_target\.{pid}\.dat\n",
                            status.stdout), status.stdout
        # when memrec ctl pauses, resumes and marks around its allocations and signals
        target.send("run first")
        assert support.ctl(build, "ctl", pid, "stop").stdout == "ok: paused (was recording)\n"
        target.send("signal")
        target.send("run paused")
        assert support.ctl(build, "ctl", pid, "status").stdout.startswith("paused, pid ")
        assert support.ctl(build, "ctl", pid, "start").stdout == "ok: recording (was paused)\n"
        target.send("run resumed")
        assert support.ctl(build, "mark", pid, "load", "test", "end").stdout == "ok: marked load test end\n"
        target.send("signal")
        target.send("run marked")
        again = support.ctl(build, "ctl", pid, "start")
        assert (again.returncode, again.stdout) == (0, "ok: recording (already was)\n")
    finally:
        run = target.quit()
    # then the program's handler got both its signals, as it would without memrec
    assert (run.returncode, run.stdout.splitlines()[-1]) == (0, "ctl_target: 2 SIGUSR1 handled"), run.describe()
    assert run.stderr == ""
    # and the recorded windows hold exactly what was allocated in them
    assert len(run.dats) == 1
    rep = only_process(support.report(build, run.dats[0]))
    leaked = {site_function(build, s): (s["leaked_count"], s["leaked_bytes"]) for s in ranked_sites(rep, "leaked")}
    assert leaked == {"alloc_first": (1, 1111), "alloc_resumed": (1, 3333), "alloc_marked": (1, 4444)}
    assert [(r["on"], r["source"]) for r in rep["recording"]] == [(False, "ctl"), (True, "ctl")]
    assert [(m["label"], m["source"]) for m in rep["markers"]] == [("load test end", "ctl")]
    # and a range from the marker holds only what came after it
    after = only_process(support.report(build, run.dats[0], args=["--from", "mark:load test end"]))
    assert {f: v for f, v in _allocated_by_function(build, after).items() if f and f.startswith("alloc_")} == {
        "alloc_marked": (1, 4444)}


def test_a_marker_that_opens_a_frame_leaves_the_dump_readable(build, tmp_path):
    # given ctl_target flushing every 20 ms, idle after its warm-up, so the
    # next frame starts with a marker, before any heap event
    target = support.Driven(build, tmp_path, env={"MEMREC_FLUSH_INTERVAL_MS": "20"})
    try:
        pid, _ = target.listening()
        time.sleep(0.2)
        assert support.ctl(build, "mark", pid, "idle").stdout == "ok: marked idle\n"
        target.send("run first")
    finally:
        run = target.quit()
    assert run.returncode == 0, run.describe()
    # then the dump reads whole (a frame's note is of its heap events only), the marker before the block
    rep = only_process(support.report(build, run.dats[0], args=["--from", "mark:idle"]))
    assert {f: v for f, v in _allocated_by_function(build, rep).items() if f and f.startswith("alloc_")} == {
        "alloc_first": (1, 1111)}


def test_ctl_refuses_bad_commands_with_usage_errors(build):
    for args, message in [(["ctl", "12x", "status"], "'12x' is not a process id"),
                          (["ctl", "1", "pause"], "unknown command 'pause'"),
                          (["ctl", "1", "mark"], "mark needs a label"),
                          (["ctl", "1", "status", "now"], "status takes no argument"),
                          (["mark", "1"], "mark needs a label"),
                          (["ctl"], "no PID given")]:
        run = support.ctl(build, *args)
        assert run.returncode == 1, run.describe()
        assert message in run.stderr, run.describe()


def test_ctl_fails_cleanly_without_a_process_or_a_socket(build, tmp_path):
    # a pid that no longer exists
    gone = subprocess.Popen(["true"])
    gone.wait()
    run = support.ctl(build, "ctl", gone.pid, "status")
    assert (run.returncode, run.stdout) == (2, "")
    assert run.stderr == f"memrec: ctl: no process {gone.pid} (it exited, or the pid is wrong)\n"
    # a process that does not run under memrec
    plain = support.Driven(build, tmp_path, preload=False)
    try:
        plain.send("warm")
        run = support.ctl(build, "mark", plain.proc.pid, "x")
        assert run.returncode == 2
        assert f"memrec: ctl: process {plain.proc.pid} has no memrec control socket" in run.stderr
        # a stopped process cannot answer: said at once, not after a wait
        os.kill(plain.proc.pid, signal.SIGSTOP)
        try:
            run = support.ctl(build, "ctl", plain.proc.pid, "status")
            assert run.returncode == 2
            assert f"process {plain.proc.pid} is stopped" in run.stderr, run.stderr
        finally:
            os.kill(plain.proc.pid, signal.SIGCONT)
    finally:
        plain.quit()


def test_ctl_refuses_another_users_process(build, tmp_path):
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run memrec ctl as another user")
    nobody = 65534
    target = support.Driven(build, tmp_path)
    try:
        pid, _ = target.listening()
        # memrec ctl refuses before connecting
        run = support.ctl(build, "ctl", pid, "stop", user=nobody)
        assert run.returncode == 2, run.describe()
        assert f"process {pid} belongs to another user (uid 0)" in run.stderr, run.stderr
        # and a client that skips that check is refused by the recorder
        script = ("import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect('\\0memrec-ctl.'+sys.argv[1]);"
                  " s.sendall(b'stop\\n'); print(s.recv(512).decode(), end='')")
        argv = [shutil.which("setpriv"), f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups",
                "/usr/bin/python3", "-c", script, str(pid)]
        raw = support.finish(support.start(argv, support.clean_env()), argv, support.TIMEOUT_S)
        assert raw.stdout == ("error: permission denied: only the process's owner may control its recording\n"), \
            raw.describe()
        assert support.ctl(build, "ctl", pid, "status").stdout.startswith("recording, pid ")
    finally:
        target.quit()


def test_a_fork_child_has_its_own_control_socket(build, tmp_path):
    target = support.Driven(build, tmp_path)
    try:
        parent, _ = target.listening()
        child_line = target.send("fork", expect=None)
        assert child_line.startswith("child "), child_line
        child = int(child_line.split()[1])
        status = support.wait_for_socket(build, child)
        assert f"pid {child}, dump {target.out_dir}/ctl_target.{child}.dat" in status.stdout, status.stdout
        assert f"pid {parent}, dump " in support.ctl(build, "ctl", parent, "status").stdout
        assert support.ctl(build, "mark", child, "in-child").returncode == 0
        os.kill(child, signal.SIGTERM)
        target.send("reap", expect=f"ok {int(signal.SIGTERM)}")
        # the child's socket went with it
        assert "no process" in support.ctl(build, "ctl", child, "status").stderr
    finally:
        run = target.quit()
    dumps = {support.info(build, d)["header"]["pid"]: support.info(build, d) for d in run.dats}
    assert set(dumps) == {parent, child}
    assert [m["label"] for m in dumps[child]["markers"]] == ["in-child"]
    assert dumps[parent]["markers"] == []


def test_an_execd_image_answers_on_the_same_pid_with_its_own_dump(build, tmp_path):
    # given ctl_target recorded, with its control socket listening
    target = support.Driven(build, tmp_path)
    try:
        pid, status = target.listening()
        assert f"dump {target.out_dir}/ctl_target.{pid}.dat" in status.stdout
        # when it execs itself: the old image's socket goes with it
        target.proc.stdin.write(b"exec\n")
        target.proc.stdin.flush()
        # then the new image's recorder listens on the same pid, for its own dump
        pid_again, status = target.listening()
        assert pid_again == pid
        assert f"dump {target.out_dir}/ctl_target.{pid}.1.dat" in status.stdout, status.stdout
        assert support.ctl(build, "mark", pid, "after-exec").returncode == 0
    finally:
        run = target.quit()
    assert run.returncode == 0 and run.stderr == "", run.describe()
    markers = {d.name: [m["label"] for m in support.info(build, d)["markers"]] for d in run.dats}
    assert markers == {f"ctl_target.{pid}.dat": [], f"ctl_target.{pid}.1.dat": ["after-exec"]}

