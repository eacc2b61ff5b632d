"""The workloads of scripts/bench: what each one runs, at full and quick sizes.

Used by bench.py only. A workload is a command line plus environment; it must
be deterministic (the same allocation calls on every run), since event counts
are taken from one repetition and sizes from all. Nothing here runs anything
except `g++ -###`, which prints the cc1plus command line without compiling.
"""

import dataclasses
import os
import shlex
import subprocess

SWEEP_DEPTHS = (1, 8, 32, 64, 128)
SWEEP_THREADS = (1, 2, 4, 8)
CHURN_DEPTH = 21  # + main, run_worker, churn_batch, the allocation site and libc's start frames: ~27


@dataclasses.dataclass
class Workload:
    name: str  # what --only and the tables use
    group: str  # "churn", "depth", "threads" or "program"; --only accepts it too
    describe: str  # one line for the doc
    argv: list
    env: dict = dataclasses.field(default_factory=dict)
    stack_frames: int = 0  # the recursion depth of the depth sweep, else 0
    threads: int = 0  # the program threads of the thread sweep, else 0


def _sizes(quick):
    if quick:
        return {"churn_allocs": 20_000, "big_allocs": 40_000, "sweep_allocs": 5_000, "thread_allocs": 20_000,
                "sqlite_rows": 2_000, "python_rounds": 5}
    return {"churn_allocs": 5_000_000, "big_allocs": 10_000_000, "sweep_allocs": 2_000_000,
            "thread_allocs": 4_000_000, "sqlite_rows": 200_000, "python_rounds": 300}


def cc1plus_command(source, output, defines):
    """The cc1plus command line that `g++ -std=c++20 -O0 -c source` would run.

    g++ is only a driver that starts cc1plus (and `as`); `heaptrack g++ …`
    records the driver alone, and memrec would record the driver and the
    assembler besides. So the compiler proper is run directly.
    """
    probe = ["g++", "-###", "-std=c++20", "-O0", *defines, "-c", source, "-o", output + ".o"]
    listing = subprocess.run(probe, capture_output=True, text=True, check=True).stderr
    for line in listing.splitlines():
        words = shlex.split(line)
        if words and os.path.basename(words[0]) == "cc1plus":
            out_index = words.index("-o") + 1  # a temporary .s file: ours instead
            words[out_index] = output
            return words
    raise RuntimeError(f"`{' '.join(probe)}` printed no cc1plus command:\n{listing}")


def all_workloads(repo, build_dir, work_dir, quick):
    """Every workload in table order; work_dir receives their output files."""
    sizes = _sizes(quick)
    churn = os.path.join(build_dir, "bench", "churn")
    allocs, sweep_allocs = sizes["churn_allocs"], sizes["sweep_allocs"]
    workloads = [
        Workload("churn-1t", "churn",
                 f"bench/churn.cpp: {allocs:,} malloc+free in one thread, depth {CHURN_DEPTH} (~27 frames)",
                 [churn, str(allocs), "1", str(CHURN_DEPTH)]),
        Workload("churn-2t", "churn",
                 f"the same {allocs:,} malloc+free split over 2 threads",
                 [churn, str(allocs), "2", str(CHURN_DEPTH)]),
        # 20 million events: the analyzers' load time and memory on a large dump.
        Workload("churn-20m", "churn",
                 f"bench/churn.cpp: {sizes['big_allocs']:,} malloc+free in one thread (20 M events), depth {CHURN_DEPTH}",
                 [churn, str(sizes["big_allocs"]), "1", str(CHURN_DEPTH)]),
    ]
    for depth in SWEEP_DEPTHS:
        workloads.append(Workload(f"depth-{depth}", "depth",
                                  f"bench/churn.cpp: {sweep_allocs:,} malloc+free, one thread, recursion depth {depth}",
                                  [churn, str(sweep_allocs), "1", str(depth)], stack_frames=depth))
    # The same total work split over more threads: what a serial recorder
    # thread or a cache line every event writes would show (scripts/bench's
    # "Thread sweep" table).
    thread_allocs = sizes["thread_allocs"]
    for threads in SWEEP_THREADS:
        workloads.append(Workload(f"threads-{threads}", "threads",
                                  f"bench/churn.cpp: {thread_allocs:,} malloc+free over {threads} thread"
                                  f"{'s' if threads > 1 else ''}, depth {CHURN_DEPTH}",
                                  [churn, str(thread_allocs), str(threads), str(CHURN_DEPTH)], threads=threads))
    source = os.path.join(repo, "bench", "stl_heavy.cpp")
    defines = ["-DBENCH_SMALL"] if quick else []
    workloads.append(Workload("cc1plus", "program",
                              "cc1plus -O0 -std=c++20 on bench/stl_heavy.cpp" + (" (-DBENCH_SMALL)" if quick else ""),
                              cc1plus_command(source, os.path.join(work_dir, "stl_heavy.s"), defines)))
    rows = sizes["sqlite_rows"]
    workloads.append(Workload("sqlite3", "program",
                              f"sqlite3 :memory: running bench/sqlite_rows.sql with {rows:,} rows",
                              ["sqlite3", "-batch", ":memory:", "-cmd", f".parameter set @rows {rows}",
                               ".read " + os.path.join(repo, "bench", "sqlite_rows.sql")]))
    rounds = sizes["python_rounds"]
    workloads.append(Workload("python3", "program",
                              f"/usr/bin/python3 bench/python_churn.py {rounds} with PYTHONMALLOC=malloc",
                              ["/usr/bin/python3", os.path.join(repo, "bench", "python_churn.py"), str(rounds)],
                              env={"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1"}))
    return workloads


def select(workloads, only):
    """The workloads named by --only (a name or a group); all when `only` is empty."""
    if not only:
        return workloads
    chosen = [w for w in workloads if w.name in only or w.group in only]
    known = {w.name for w in workloads} | {w.group for w in workloads}
    unknown = [name for name in only if name not in known]
    if unknown:
        raise ValueError(f"--only {', '.join(unknown)}: no such workload; choose from {', '.join(sorted(known))}")
    return chosen
