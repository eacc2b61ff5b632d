"""Faults the recorder meets while it writes: a full disk, a file-size limit,
an output directory nobody may write, its dump deleted under it, SIGKILL at
any moment. In each the program runs on to its normal end (same stdout, same
exit code); memrec says what happened in exactly one `memrec:` line and stops
recording; what was written up to there still reads, and says it was cut.

The disk cases mount a small tmpfs, which takes root (CI runs as root); when
that is not possible they skip and say why."""
from __future__ import annotations

import errno
import os
import random
import resource
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest

import memrec_support as support
from memrec_support import memrec_lines

# fault_workload's allocations: its dump grows to about 4 MB in 9 frames
# (incompressible sizes and addresses), well past the limits below, in under
# a second.
WORKLOAD = "800000"
WORKLOAD_OUT = f"fault_workload: {WORKLOAD} allocations, "
SMALL_BYTES = 2 << 20


def mount_tmpfs(path: Path, options: str) -> None:
    """Mounts a tmpfs on `path`, or skips the test saying why."""
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs takes root (CI runs these tests as root)")
    path.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "memrec-test", str(path)],
                            capture_output=True, text=True, timeout=support.TIMEOUT_S, check=False)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({result.stderr.strip()}): a container without CAP_SYS_ADMIN?")


def unmount(path: Path) -> None:
    subprocess.run(["umount", str(path)], capture_output=True, timeout=support.TIMEOUT_S, check=False)


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MiB tmpfs, unmounted afterwards."""
    path = tmp_path / "small-disk"
    mount_tmpfs(path, f"size={SMALL_BYTES},mode=0755")
    yield path
    unmount(path)


@pytest.fixture
def read_only_dir(tmp_path):
    """A directory nobody may create files in: a read-only tmpfs as root
    (root passes every permission check), else mode 0555."""
    path = tmp_path / "read-only"
    if os.geteuid() == 0:
        mount_tmpfs(path, "ro,size=64k")
        yield path
        unmount(path)
    else:
        path.mkdir()
        path.chmod(0o555)
        yield path
        path.chmod(0o755)


def assert_ran_as_without_preload(run, plain) -> str:
    """Same exit code and stdout, the same stderr but for one `memrec:` line,
    which is returned."""
    assert plain.returncode == 4 and plain.stdout.splitlines()[-1].startswith(WORKLOAD_OUT), plain.describe()
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    lines = memrec_lines(run.stderr)
    assert len(lines) == 1, run.stderr
    assert [line for line in run.stderr.splitlines() if not line.startswith("memrec:")] == plain.stderr.splitlines()
    return lines[0]


def assert_cut_and_stopped(build, dat: Path, info, leaks_by_function) -> dict:
    """The dump reads, up to where writing stopped: no End, events before it,
    and none of the leaks made at the program's end (recording had stopped)."""
    dump = info(dat)
    assert dump["clean_end"] is False
    assert dump["frames"] >= 1 and dump["counts"]["alloc"] > 0, dump["counts"]
    assert dump["counts"]["alloc"] < int(WORKLOAD)
    assert "leak_at_end" not in leaks_by_function(dump)
    report = support.only_process(support.report(build, dat))
    assert report["dump"]["complete"] is False and report["dump"]["error"] is None
    assert report["allocations"] == dump["counts"]["alloc"]
    return dump


def test_a_full_disk_stops_the_recording_and_the_program_goes_on(build, record, run_plain, info, leaks_by_function,
                                                                 small_disk):
    # given a dump going to a 2 MiB file system, and a program whose dump grows to about 4 MB
    # when fault_workload runs under the preload
    run = record("fault_workload", WORKLOAD, output=str(small_disk / "%e.%p.dat"))
    plain = run_plain("fault_workload", WORKLOAD)
    # then it ends as without the preload, and memrec said once why it stopped
    line = assert_ran_as_without_preload(run, plain)
    (dat,) = sorted(small_disk.iterdir())
    assert line == f"memrec: cannot write {dat}: No space left on device; recording stopped, the program goes on"
    # and the dump filled the disk and reads up to there, cut
    assert SMALL_BYTES - 64 * 1024 < dat.stat().st_size <= SMALL_BYTES
    assert_cut_and_stopped(build, dat, info, leaks_by_function)


@pytest.mark.parametrize("sigxfsz", ["ignored", "default"])
def test_a_file_size_limit_stops_the_recording_and_the_program_goes_on(build, record, run_plain, info,
                                                                       leaks_by_function, sigxfsz):
    # given `ulimit -f` of 1.5 MiB, with SIGXFSZ ignored (as a shell user
    # would) or at its default action, which kills the process
    limit = 1536 << 10

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        if sigxfsz == "ignored":
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    # when fault_workload runs under the preload
    run = record("fault_workload", WORKLOAD, preexec_fn=limit_file_size)
    plain = run_plain("fault_workload", WORKLOAD, preexec_fn=limit_file_size)
    # then it ends as without the preload (the writer thread blocks SIGXFSZ,
    # so its write fails with EFBIG instead of killing the program)
    line = assert_ran_as_without_preload(run, plain)
    (dat,) = run.dats
    assert line == f"memrec: cannot write {dat}: File too large; recording stopped, the program goes on"
    # and the dump is exactly as long as the limit, and reads up to there, cut
    assert dat.stat().st_size == limit
    assert_cut_and_stopped(build, dat, info, leaks_by_function)


@pytest.mark.parametrize("fault", ["full disk", "ulimit -f 64", "ulimit -f 64, SIGXFSZ default"])
def test_a_header_that_cannot_be_written_leaves_no_file_behind(record, run_plain, small_disk, fault):
    # given a file system already full to its last block, or a file-size
    # limit smaller than the dump's header (which the constructor writes on
    # the program's own thread: SIGXFSZ at its default action must not kill it)
    limit = resource.RLIM_INFINITY
    if fault == "full disk":
        fd = os.open(small_disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, bytes(64 << 10)) > 0:
                pass
        except OSError as error:
            assert error.errno == errno.ENOSPC
        finally:
            os.close(fd)
    else:
        limit = 64

    def limit_file_size():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL if fault.endswith("default") else signal.SIG_IGN)

    # when fault_workload runs under the preload
    run = record("fault_workload", WORKLOAD, output=str(small_disk / "%e.%p.dat"), preexec_fn=limit_file_size)
    plain = run_plain("fault_workload", WORKLOAD, preexec_fn=limit_file_size)
    # then it ends as without the preload, memrec said once that there is no
    # dump, and removed the file it could not write a header into (a file
    # that `memrec info` would reject)
    line = assert_ran_as_without_preload(run, plain)
    reason = "No space left on device" if fault == "full disk" else "File too large"
    assert line == (f"memrec: no dump: cannot write the header of {small_disk}/fault_workload.{run.pid}.dat: "
                    f"{reason}; recording stopped, the program goes on")
    assert sorted(p.name for p in small_disk.iterdir()) == (["filler"] if fault == "full disk" else [])


def test_an_unwritable_output_directory_says_one_line_and_the_program_goes_on(record, run_plain, read_only_dir):
    # given MEMREC_OUTPUT in a directory where no file can be created
    # when fault_workload runs under the preload
    run = record("fault_workload", WORKLOAD, output=str(read_only_dir / "%e.%p.dat"))
    plain = run_plain("fault_workload", WORKLOAD)
    # then it ends as without the preload, memrec said once that it cannot
    # create the dump, and there is none
    line = assert_ran_as_without_preload(run, plain)
    assert line.startswith(f"memrec: cannot create {read_only_dir}/fault_workload.{run.pid}.dat: "), line
    assert line.endswith(("Read-only file system; recording stopped, the program goes on",
                          "Permission denied; recording stopped, the program goes on")), line
    assert list(read_only_dir.iterdir()) == []


def read_line(proc: subprocess.Popen, timeout_s: float) -> bytes:
    """One line of the child's stdout, read from the descriptor itself so
    that communicate() later gets the rest."""
    data = b""
    deadline = time.monotonic() + timeout_s
    while not data.endswith(b"\n"):
        remaining = deadline - time.monotonic()
        if remaining <= 0 or not select.select([proc.stdout], [], [], remaining)[0]:
            support.kill_tree(proc)
            pytest.fail(f"no line from {proc.args[0]} in {timeout_s} s (got {data!r})")
        chunk = os.read(proc.stdout.fileno(), 1)
        if not chunk:
            pytest.fail(f"{proc.args[0]} closed its stdout after {data!r}")
        data += chunk
    return data


def test_a_deleted_dump_stops_the_recording_and_the_program_goes_on(build, preload, run_plain, info,
                                                                    leaks_by_function, tmp_path):
    # Deleting the dump while the program runs is taken as "not wanted any
    # more": writing on into an inode nobody can open would fill the disk
    # invisibly (df counts it, du does not) until the program exits, and all
    # of it would be thrown away then. So the recorder notices (its link
    # count is 0 at the next frame), says so once and stops.
    # given fault_workload under the preload, halfway through
    out_dir = support.fresh_dir(tmp_path, "memrec-out")
    env = support.clean_env({"LD_PRELOAD": str(preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat")})
    argv = [str(build.program("fault_workload")), WORKLOAD, "wait"]
    proc = support.start(argv, env, cwd=out_dir, stdin=subprocess.PIPE)
    kept = None
    try:
        assert read_line(proc, support.TIMEOUT_S) == b"ready\n"
        (dat,) = sorted(out_dir.iterdir())
        # when its dump is deleted (a descriptor kept here, to read it afterwards)
        kept = os.open(dat, os.O_RDONLY)
        dat.unlink()
        run = support.finish(proc, argv, support.TIMEOUT_S, input=b"go")
        run.stdout = "ready\n" + run.stdout  # read above
        plain = run_plain("fault_workload", WORKLOAD, "wait", input=b"go")
        # then the program ends as without the preload, and memrec said once
        # that the dump was deleted
        assert plain.stdout.startswith("ready\n")
        line = assert_ran_as_without_preload(run, plain)
        assert line == (f"memrec: the dump was deleted: {dat}: No such file or directory; "
                        "recording stopped, the program goes on")
        # and no file came back, and what was written before reads, cut
        assert list(out_dir.iterdir()) == []
        saved = tmp_path / "saved.dat"
        saved.write_bytes(os.pread(kept, os.fstat(kept).st_size, 0))
    finally:
        support.kill_tree(proc)
        if kept is not None:
            os.close(kept)
    assert_cut_and_stopped(build, saved, info, leaks_by_function)


# The recorder writes a frame at least once a second (MEMREC_FLUSH_INTERVAL_MS,
# 1000 by default); its writer thread gets a quarter second more to wake,
# compress and write on a loaded machine, as in scripts/stress.
LOSS_BOUND_NS = 1_250_000_000


def end_line(dump: dict) -> str:
    """The `end` line `memrec info` prints for a dump without an End record
    (analyzer/reports/info_text.cpp): a last frame cut short names its offset."""
    if dump["truncated_at"] is None:
        return "  end       no End record: the process stopped without a clean exit"
    return f"  end       cut at offset {dump['truncated_at']}: the last complete frame ends there"


@pytest.mark.parametrize("pace,kills,earliest_s,latest_s", [
    # flat out: frames fill and go out every few milliseconds, so a kill may
    # land in the middle of a write; the dump grows ~15 MB a second, which
    # `memrec info` reads twice here, so the kills come early
    ("flat-out", 3, 0.02, 0.3),
    # paced (1 ms sleep per allocation): frames go out only at the
    # once-a-second flush, and the kill comes late enough for the bound to bite
    ("paced", 2, 1.75, 2.5),
])
def test_sigkill_at_random_moments_leaves_a_dump_that_says_it_was_cut_and_lost_at_most_the_last_second(
        build, preload, memrec_cli, info, tmp_path, pace, kills, earliest_s, latest_s):
    # given sigkill_loop: four threads allocating without end, and a marker
    # "marker <CLOCK_MONOTONIC ns> <allocations so far>" every 100 ms from main
    seed = random.randrange(1 << 32)
    rng = random.Random(seed)
    moments = sorted(rng.uniform(earliest_s, latest_s) for _ in range(kills))
    for moment in moments:
        out_dir = support.fresh_dir(tmp_path, "memrec-out")
        env = support.clean_env({"LD_PRELOAD": str(preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat")})
        argv = [str(build.program("sigkill_loop")), *(["paced"] if pace == "paced" else [])]
        proc = support.start(argv, env, cwd=out_dir)
        try:
            # when it is SIGKILLed that many seconds after main printed its
            # first marker (so the preload had started: its dump exists)
            first = read_line(proc, support.TIMEOUT_S).decode()
            time.sleep(moment)
            killed_at_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, the dump's clock
            os.kill(proc.pid, signal.SIGKILL)
            run = support.finish(proc, argv, support.TIMEOUT_S)
        finally:
            support.kill_tree(proc)
        context = f"{pace}, killed {moment:.3f} s into main (seed {seed})"
        assert run.returncode == -signal.SIGKILL, context
        markers = [tuple(map(int, line.split()[1:])) for line in (first + run.stdout).splitlines()
                   if line.startswith("marker ")]
        # then its one dump (created at start) reads, and says it was cut
        dats = sorted(out_dir.iterdir())
        assert len(dats) == 1, context
        dump = info(dats[0])
        assert dump["clean_end"] is False, context
        assert dump["header"]["pid"] == run.pid, context
        text = support.memrec_raw(build, ["info", dats[0]])
        assert text.returncode == 0, text.describe()
        assert [line for line in text.stdout.splitlines() if line.startswith("  end ")] == [end_line(dump)], context
        # and it lost at most the last LOSS_BOUND_NS: its last event is that
        # recent, and it holds every allocation main counted before then
        last_event_ns = dump["header"]["start_mono_ns"] + dump["duration_ns"]
        assert killed_at_ns - last_event_ns <= LOSS_BOUND_NS, (context, killed_at_ns - last_event_ns)
        old_enough = [count for when_ns, count in markers if when_ns <= killed_at_ns - LOSS_BOUND_NS]
        if pace == "paced":  # killed 1.75 s or more into main: at least the markers of 0 and 0.1 s are that old
            assert len(old_enough) >= 2 and old_enough[-1] > 0, (context, markers)
        assert dump["counts"]["alloc"] >= max(old_enough, default=0), (context, dump["counts"], markers)
