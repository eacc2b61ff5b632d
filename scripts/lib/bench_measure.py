"""Runs one workload without a profiler, under heaptrack and under memrec, and
the two analyzers on the files, measuring each process with wait4 through
bench/rusage_run.

Used by bench.py only. Every child gets an explicit environment built from
clean_env(), so LD_PRELOAD reaches the profiled target and nothing else: not
this process, not heaptrack's interpreter, not heaptrack_print or memrec,
and not bench/rusage_run, which starts each of them.
"""

import dataclasses
import glob
import json
import os
import shutil
import subprocess
import time

HEAPTRACK_LIB = "/usr/lib/heaptrack"
HEAPTRACK_PRELOAD = os.path.join(HEAPTRACK_LIB, "libheaptrack_preload.so")
HEAPTRACK_INTERPRET = os.path.join(HEAPTRACK_LIB, "libexec", "heaptrack_interpret")
# Like /usr/bin/heaptrack: zstd when its command is installed, else gzip.
COMPRESSOR = ("zstd", ".zst") if shutil.which("zstd") else ("gzip", ".gz")
# Variables that must not leak from the caller into any measured process.
_SCRUBBED_PREFIXES = ("MEMREC_", "DUMP_HEAPTRACK")
_SCRUBBED = {"LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONMALLOC", "MALLOC_CHECK_", "MALLOC_PERTURB_"}


class BenchError(Exception):
    """A run failed; the message names the command and where its output is."""


@dataclasses.dataclass
class Run:
    wall_s: float
    cpu_s: float  # user + sys of the process and the children it waited for
    maxrss_kib: int  # ru_maxrss: the largest of the process and its waited-for children


class Launcher:
    """Starts measured processes through bench/rusage_run (see its comment for
    why): it forks the target from a small process and reports wait4's rusage."""

    def __init__(self, path):
        self.path = path

    def spawn(self, argv, extra_env, log_base):
        """Starts argv (stdin /dev/null, output into LOG_BASE.out/.err); the
        variables of extra_env reach argv only. Returns a handle for wait()."""
        result = log_base + ".rusage"
        pairs = [f"{name}={value}" for name, value in (extra_env or {}).items()]
        command = [self.path, result, *pairs, "--", *argv]
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log_base + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
            (os.POSIX_SPAWN_OPEN, 2, log_base + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        ]
        try:
            pid = os.posix_spawn(self.path, command, clean_env(), file_actions=actions)
        except OSError as error:
            raise BenchError(f"cannot start {self.path}: {error}") from error
        return pid, argv, log_base

    @staticmethod
    def wait(handle):
        pid, argv, log_base = handle
        _, status = os.waitpid(pid, 0)
        launcher_code = os.waitstatus_to_exitcode(status)
        try:
            with open(log_base + ".rusage") as f:
                wall_ns, user_ns, sys_ns, maxrss_kib, code = (int(x) for x in f.read().split())
        except (OSError, ValueError):
            wall_ns, code = 0, launcher_code
        if launcher_code != 0 or code != 0:
            raise BenchError(f"`{' '.join(argv)}` exited with status {code}; "
                             f"stderr ({log_base}.err) ends:\n{_tail(log_base + '.err')}")
        return Run(wall_ns / 1e9, (user_ns + sys_ns) / 1e9, maxrss_kib)

    def measure(self, argv, extra_env, log_base):
        return self.wait(self.spawn(argv, extra_env, log_base))


def clean_env():
    return {k: v for k, v in os.environ.items() if k not in _SCRUBBED and not k.startswith(_SCRUBBED_PREFIXES)}


def _tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no output)"


def run_baseline(launcher, workload, log_base):
    return launcher.measure(workload.argv, workload.env, log_base)


# MEMREC_* variables for every run under memrec (bench.py --memrec-env).
MEMREC_ENV = {}


def run_memrec(launcher, workload, preload, out_dir, log_base):
    """Returns (target Run, list of dump paths). The writer thread lives in the
    target, so its Run holds all of memrec's cost."""
    pattern = os.path.join(out_dir, f"memrec.{workload.name}.%p.dat")
    env = {**workload.env, **MEMREC_ENV, "LD_PRELOAD": preload, "MEMREC_OUTPUT": pattern}
    run = launcher.measure(workload.argv, env, log_base)
    dumps = sorted(glob.glob(os.path.join(out_dir, f"memrec.{workload.name}.*.dat")))
    if not dumps:
        raise BenchError(f"memrec wrote no dump for {workload.name} into {out_dir}; see {log_base}.err")
    return run, dumps


def run_heaptrack(launcher, workload, out_dir, log_base):
    """Does what /usr/bin/heaptrack does, minus its shell start-up: the target
    runs with libheaptrack_preload.so writing into a FIFO, which
    heaptrack_interpret reads and zstd (or gzip) compresses. Measuring the target
    directly gives its own peak RSS; the wall time runs until the compressed
    file is complete. Returns (Run of the whole, Run of the target, path)."""
    fifo = os.path.join(out_dir, f"heaptrack.{workload.name}.fifo")
    compressor, suffix = COMPRESSOR
    output = os.path.join(out_dir, f"heaptrack.{workload.name}{suffix}")
    os.mkfifo(fifo, 0o600)
    reader_argv = ["/bin/sh", "-c", f'exec "$0" < "$1" | {compressor} -c > "$2"', HEAPTRACK_INTERPRET, fifo, output]
    start = time.perf_counter()
    reader = launcher.spawn(reader_argv, {}, log_base + ".interpret")
    try:
        env = {**workload.env, "LD_PRELOAD": HEAPTRACK_PRELOAD, "DUMP_HEAPTRACK_OUTPUT": fifo}
        target = launcher.measure(workload.argv, env, log_base)
    finally:
        _release_fifo_reader(fifo, reader[0])
        whole = launcher.wait(reader)
        os.unlink(fifo)
    wall_s = time.perf_counter() - start
    return Run(wall_s, target.cpu_s + whole.cpu_s, target.maxrss_kib), target, output


def _release_fifo_reader(fifo, reader):
    """If the target never opened the FIFO (it failed early), the reader still
    waits in open(); opening the write end once lets it see end-of-file. When
    the target did write, this changes nothing: it has exited already."""
    while True:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            return
        except OSError:  # ENXIO: no reader has the FIFO open (not yet, or no more)
            exited = os.waitid(os.P_PID, reader, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if exited is not None:
                return
            time.sleep(0.01)


def memrec_analyzer_command(memrec):
    """`memrec report` when this build has it, else `memrec info`."""
    probe = subprocess.run([memrec, "report", "--help"], capture_output=True, env=clean_env())
    return "report" if probe.returncode == 0 else "info"


def run_memrec_analyzer(launcher, memrec, command, dumps, log_base):
    return launcher.measure([memrec, command, *dumps], {}, log_base)


def run_heaptrack_print(launcher, path, log_base):
    return launcher.measure(["heaptrack_print", path], {}, log_base)


def memrec_counts(memrec, dumps):
    """Sums, over the dumps of one run, the allocation calls memrec recorded."""
    result = subprocess.run([memrec, "info", "--json", *dumps], capture_output=True, text=True, env=clean_env())
    if result.returncode != 0:
        raise BenchError(f"memrec info --json {' '.join(dumps)} failed: {result.stderr.strip()}")
    infos = json.loads(result.stdout)
    totals = {"alloc": 0, "realloc": 0, "free": 0, "events": 0}
    for info in infos if isinstance(infos, list) else [infos]:
        for key in ("alloc", "realloc", "free"):
            totals[key] += info["counts"][key]
        totals["events"] += info["counters"]["events"]
    return totals


def memrec_recorder_threads(memrec, dumps):
    """The recorder's own threads over the dumps of one run: each one's CPU
    time and events coded (memrec info's recorder_threads), and the events."""
    result = subprocess.run([memrec, "info", "--json", *dumps], capture_output=True, text=True, env=clean_env())
    if result.returncode != 0:
        raise BenchError(f"memrec info --json {' '.join(dumps)} failed: {result.stderr.strip()}")
    infos = json.loads(result.stdout)
    threads, events = [], 0
    for info in infos if isinstance(infos, list) else [infos]:
        threads += [{"cpu_ns": t["cpu_ns"], "events": t["events"]} for t in info["recorder_threads"]]
        events += info["counters"]["events"]
    return {"threads": threads, "events": events}


def heaptrack_counts(path):
    """Counts the '+' (allocation) and '-' (free) records of heaptrack's file;
    heaptrack writes a realloc as both."""
    pipeline = subprocess.Popen([COMPRESSOR[0], "-dc", path], stdout=subprocess.PIPE, env=clean_env())
    plus = minus = 0
    for line in pipeline.stdout:
        if line.startswith(b"+ "):
            plus += 1
        elif line.startswith(b"- "):
            minus += 1
    if pipeline.wait() != 0:
        raise BenchError(f"{COMPRESSOR[0]} -dc {path} failed")
    return {"alloc": plus, "free": minus}


def file_bytes(paths):
    return sum(os.path.getsize(p) for p in paths)


