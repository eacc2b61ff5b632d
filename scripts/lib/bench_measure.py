"""Runs one workload without a profiler, under heaptrack and under memrec, and
the two analyzers on the files, measuring each process with os.wait4.

Used by bench.py only. Every child gets an explicit environment built from
clean_env(), so LD_PRELOAD reaches the profiled target and nothing else: not
this process, not heaptrack's interpreter, not heaptrack_print or memrec.
"""

import dataclasses
import glob
import json
import os
import resource
import subprocess
import time

HEAPTRACK_LIB = "/usr/lib/heaptrack"
HEAPTRACK_PRELOAD = os.path.join(HEAPTRACK_LIB, "libheaptrack_preload.so")
HEAPTRACK_INTERPRET = os.path.join(HEAPTRACK_LIB, "libexec", "heaptrack_interpret")
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


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED and not k.startswith(_SCRUBBED_PREFIXES)}
    env.update(extra or {})
    return env


def _spawn(argv, env, log_base):
    """Starts argv with stdin from /dev/null and stdout/stderr into log files."""
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
        (os.POSIX_SPAWN_OPEN, 1, log_base + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
        (os.POSIX_SPAWN_OPEN, 2, log_base + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644),
    ]
    try:
        return os.posix_spawnp(argv[0], argv, env, file_actions=actions)
    except OSError as error:
        raise BenchError(f"cannot start {argv[0]}: {error}") from error


def _reap(pid, argv, log_base, start):
    _, status, usage = os.wait4(pid, 0)
    wall_s = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        tail = _tail(log_base + ".err")
        raise BenchError(f"`{' '.join(argv)}` exited with status {code}; stderr ({log_base}.err) ends:\n{tail}")
    return Run(wall_s, usage.ru_utime + usage.ru_stime, usage.ru_maxrss)


def _tail(path, lines=15):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no output)"


def measure(argv, env, log_base):
    start = time.perf_counter()
    return _reap(_spawn(argv, env, log_base), argv, log_base, start)


def run_baseline(workload, log_base):
    return measure(workload.argv, clean_env(workload.env), log_base)


def run_memrec(workload, preload, out_dir, log_base):
    """Returns (target Run, list of dump paths). The writer thread lives in the
    target, so its Run holds all of memrec's cost."""
    pattern = os.path.join(out_dir, f"memrec.{workload.name}.%p.dat")
    env = clean_env({**workload.env, "LD_PRELOAD": preload, "MEMREC_OUTPUT": pattern})
    run = measure(workload.argv, env, log_base)
    dumps = sorted(glob.glob(os.path.join(out_dir, f"memrec.{workload.name}.*.dat")))
    if not dumps:
        raise BenchError(f"memrec wrote no dump for {workload.name} into {out_dir}; see {log_base}.err")
    return run, dumps


def run_heaptrack(workload, out_dir, log_base):
    """Does what /usr/bin/heaptrack does, minus its shell start-up: the target
    runs with libheaptrack_preload.so writing into a FIFO, which
    heaptrack_interpret reads and zstd compresses. Measuring the target
    directly gives its own peak RSS; the wall time runs until the compressed
    file is complete. Returns (wall/CPU Run of the whole, target Run, path)."""
    fifo = os.path.join(out_dir, f"heaptrack.{workload.name}.fifo")
    output = os.path.join(out_dir, f"heaptrack.{workload.name}.zst")
    os.mkfifo(fifo, 0o600)
    reader_argv = ["/bin/sh", "-c", 'exec "$0" < "$1" | zstd -q -c > "$2"', HEAPTRACK_INTERPRET, fifo, output]
    start = time.perf_counter()
    reader = _spawn(reader_argv, clean_env(), log_base + ".interpret")
    try:
        env = clean_env({**workload.env, "LD_PRELOAD": HEAPTRACK_PRELOAD, "DUMP_HEAPTRACK_OUTPUT": fifo})
        target = _reap(_spawn(workload.argv, env, log_base), workload.argv, log_base, start)
    finally:
        _release_fifo_reader(fifo, reader)
        whole = _reap(reader, reader_argv, log_base + ".interpret", start)
        os.unlink(fifo)
    combined = Run(whole.wall_s, target.cpu_s + whole.cpu_s, target.maxrss_kib)
    return combined, target, output


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


def run_memrec_analyzer(memrec, command, dumps, log_base):
    return measure([memrec, command, *dumps], clean_env(), log_base)


def run_heaptrack_print(path, log_base):
    return measure(["heaptrack_print", path], clean_env(), log_base)


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


def heaptrack_counts(path):
    """Counts the '+' (allocation) and '-' (free) records of heaptrack's file;
    heaptrack writes a realloc as both."""
    pipeline = subprocess.Popen(["zstd", "-dc", path], stdout=subprocess.PIPE, env=clean_env())
    plus = minus = 0
    for line in pipeline.stdout:
        if line.startswith(b"+ "):
            plus += 1
        elif line.startswith(b"- "):
            minus += 1
    if pipeline.wait() != 0:
        raise BenchError(f"zstd -dc {path} failed")
    return {"alloc": plus, "free": minus}


def file_bytes(paths):
    return sum(os.path.getsize(p) for p in paths)


def own_peak_rss_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
