"""scripts/bench --large: memrec's analyzer on a dump of hours' scale.

Records `churn N 2 21` under the preload (default N = 1.2 billion
allocations: a dump of about 5.4 GB), then times each step of reading it,
every process measured by bench/rusage_run (wall, user+sys, peak RSS):

- how fast the machine reads the dump at all: bench/load_limits (zstd alone,
  then zstd and the column decoding), the physical limit of a load;
- `memrec report` (and, with --compare OLD, another build's memrec report,
  interleaved with it run by run, so that both see the same machine);
- `memrec view`: until the whole run's figures are served (its serving
  line), then until the allocation table is ready (/api/dumps), with the
  view's peak RSS (VmHWM) and CPU time;
- heaptrack_print on heaptrack's file of the same workload, recorded with
  --heaptrack-allocations (heaptrack records ~12x slower than memrec, so a
  smaller N by default).

Dumps live in a scratch directory (--dir, default under $TMPDIR), deleted at
the end unless --keep. Prints a markdown table; measures, never checks.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_measure as measure  # noqa: E402

CHURN_DEPTH = 21
CHURN_THREADS = 2
# memrec view's allocation table spills about this much per allocation
# (docs/design/allocation_table.md): the table is skipped where the disk has
# not twice that free.
TABLE_BYTES_PER_ALLOCATION = 40


def parse_args(argv):
    p = argparse.ArgumentParser(prog="scripts/bench --large", description=__doc__.splitlines()[0])
    p.add_argument("--large", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--build-dir", required=True)
    p.add_argument("--large-allocations", type=int, default=1_200_000_000,
                   help="churn's malloc+free pairs (default 1.2 billion: ~5.4 GB)")
    p.add_argument("--heaptrack-allocations", type=int, default=50_000_000,
                   help="the pairs recorded under heaptrack for heaptrack_print (default 50 M; 0 skips it)")
    p.add_argument("--dump", help="use this dump instead of recording one (kept)")
    p.add_argument("--dir", help="scratch directory for the dumps (default: a new one under $TMPDIR)")
    p.add_argument("--keep", action="store_true", help="keep the scratch directory and its dumps")
    p.add_argument("--reps", type=int, default=1, help="runs of memrec report (default 1; at least 1)")
    p.add_argument("--compare", metavar="MEMREC", help="another memrec binary whose report is timed beside this one")
    p.add_argument("--no-view", action="store_true", help="skip memrec view")
    p.add_argument("--no-table", action="store_true", help="do not wait for the view's allocation table")
    return p.parse_args(argv)


def say(text):
    print(text, flush=True)


def record(launcher, build_dir, work_dir, allocations, name):
    dump = os.path.join(work_dir, f"{name}.dat")
    argv = [os.path.join(build_dir, "bench", "churn"), str(allocations), str(CHURN_THREADS), str(CHURN_DEPTH)]
    preload = os.path.join(build_dir, "preload", "libmemrec.so")
    say(f"recording churn {allocations} {CHURN_THREADS} {CHURN_DEPTH} under memrec ...")
    run = launcher.measure(argv, {"LD_PRELOAD": preload, "MEMREC_OUTPUT": dump}, os.path.join(work_dir, name))
    return run, dump


def limits(launcher, build_dir, dump, work_dir):
    tool = os.path.join(build_dir, "bench", "load_limits")
    log = os.path.join(work_dir, "limits")
    launcher.measure([tool, dump, "2"], {}, log)
    rows = {}
    with open(log + ".out") as f:
        for line in f:
            name, wall, cpu, count = line.split()
            rows[name] = (float(wall), float(cpu), int(count))
    return rows


def report(launcher, memrec, dump, work_dir, tag):
    """(Run, the report's figures): --json, so the counts come from the run
    measured, not from a `memrec info` that would read the dump once more."""
    log = os.path.join(work_dir, f"report-{tag}")
    run = launcher.measure([memrec, "report", "--json", "--no-progress", "--top", "10", dump], {}, log)
    with open(log + ".out") as f:
        figures = json.load(f)["processes"][0]["report"]
    return run, figures


def proc_cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_hwm_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def view(memrec, dump, wait_table):
    """(seconds until served, seconds until the table is ready or None,
    peak RSS MiB, CPU s) of `memrec view` on the dump."""
    env = measure.clean_env()
    started = time.monotonic()
    proc = subprocess.Popen([memrec, "view", "--port", "0", "--no-progress", dump], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        port, line = None, b""
        while port is None:
            if proc.poll() is not None:
                raise measure.BenchError(f"memrec view exited: {proc.stderr.read().decode(errors='replace')}")
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                line += proc.stdout.readline()
                match = re.search(rb"http://127\.0\.0\.1:(\d+)/", line)
                port = int(match.group(1)) if match else None
        # It listens before it loads: served once the dump list says so.
        while True:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/dumps", timeout=60) as response:
                first = json.loads(response.read())["dumps"][0]
            if first["state"] == "failed":
                raise measure.BenchError(f"memrec view could not load {dump}: {first['load']['error']}")
            if first["state"] != "loading":
                break
            time.sleep(0.2)
        served_s = time.monotonic() - started
        table_s = None
        while wait_table:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/dumps", timeout=60) as response:
                state = json.loads(response.read())["dumps"][0].get("table", {}).get("state")
            if state == "failed":
                break
            if state in ("ready", None):
                table_s = time.monotonic() - started
                break
            time.sleep(0.5)
        return served_s, table_s, proc_hwm_mib(proc.pid), proc_cpu_s(proc.pid)
    finally:
        proc.terminate()
        proc.communicate(timeout=60)


def heaptrack(launcher, build_dir, work_dir, allocations):
    class Workload:
        name = "churn-large"
        argv = [os.path.join(build_dir, "bench", "churn"), str(allocations), str(CHURN_THREADS), str(CHURN_DEPTH)]
        env = {}
    say(f"recording churn {allocations} {CHURN_THREADS} {CHURN_DEPTH} under heaptrack ...")
    _, _, path = measure.run_heaptrack(launcher, Workload, work_dir, os.path.join(work_dir, "heaptrack"))
    printed = launcher.measure(["heaptrack_print", path], {}, os.path.join(work_dir, "heaptrack_print"))
    return printed, os.path.getsize(path)


def row(name, run, note=""):
    return f"| {name} | {run.wall_s:.1f} | {run.cpu_s:.1f} | {run.maxrss_kib / 1024:.0f} | {note} |"


def main(argv):
    args = parse_args(argv)
    build_dir = os.path.abspath(args.build_dir)
    memrec = os.path.join(build_dir, "analyzer", "memrec")
    launcher = measure.Launcher(os.path.join(build_dir, "bench", "rusage_run"))
    work_dir = args.dir or tempfile.mkdtemp(prefix="memrec-bench-large.")
    os.makedirs(work_dir, exist_ok=True)
    lines = []
    try:
        if args.dump:
            dump = os.path.abspath(args.dump)
        else:
            recorded, dump = record(launcher, build_dir, work_dir, args.large_allocations, "large")
            lines.append(row(f"record `churn {args.large_allocations} {CHURN_THREADS} {CHURN_DEPTH}`", recorded))
        size = os.path.getsize(dump)
        lim = limits(launcher, build_dir, dump, work_dir)
        events = lim["decode"][2]
        for name, what in (("zstd", "zstd alone"), ("decode", "zstd + column decoding")):
            wall, cpu, _ = lim[name]
            lines.append(f"| limit: {what}, 2 threads (bench/load_limits) | {wall:.1f} | {cpu:.1f} |  | "
                         f"{cpu * 1e9 / events:.0f} ns of CPU an event |")
        totals = {}
        for rep in range(args.reps):
            # Interleaved: old and new see the same machine, in turn.
            order = [("new", memrec)] + ([("old", args.compare)] if args.compare else [])
            if rep % 2 == 1:
                order.reverse()
            for tag, binary in order:
                say(f"memrec report ({tag}, run {rep + 1}) ...")
                run, figures = report(launcher, binary, dump, work_dir, f"{tag}{rep}")
                allocations = figures["allocations"]
                # The totals must not depend on the build that read them.
                mine = {k: figures[k] for k in ("allocations", "frees", "allocated_bytes", "peak", "leaked",
                                                "temporary", "unmatched_frees")}
                if totals and mine != totals:
                    raise measure.BenchError(f"the reports' totals differ: {totals} against {mine} ({tag})")
                totals = mine
                name = "`memrec report`" + (f" ({tag}: {binary})" if args.compare else "")
                lines.append(row(name, run, f"{run.cpu_s * 1e9 / events:.0f} ns of CPU an event; "
                                 f"{run.maxrss_kib * 1024 / allocations:.2f} B/allocation"))
        say(f"{dump}: {size / 1e9:.2f} GB, {events:,} events, {allocations:,} allocations; totals {totals}")
        if not args.no_view:
            free = shutil.disk_usage(os.environ.get("TMPDIR", "/var/tmp")).free
            need = allocations * TABLE_BYTES_PER_ALLOCATION
            wait_table = not args.no_table and need * 2 < free
            say("memrec view ...")
            served, table, hwm, cpu = view(memrec, dump, wait_table)
            lines.append(f"| `memrec view`: whole run served | {served:.1f} |  |  | |")
            if table is not None:
                lines.append(f"| `memrec view`: allocation table ready | {table:.1f} | {cpu:.1f} | {hwm:.0f} | |")
            else:
                why = "--no-table" if args.no_table else f"needs ~{need / 1e9:.0f} GB of spill, {free / 1e9:.0f} GB free"
                lines.append(f"| `memrec view`: allocation table | not waited for ({why}) | {cpu:.1f} | {hwm:.0f} | |")
        if args.heaptrack_allocations > 0:
            printed, ht_bytes = heaptrack(launcher, build_dir, work_dir, args.heaptrack_allocations)
            lines.append(row(f"`heaptrack_print` (churn {args.heaptrack_allocations} {CHURN_THREADS} {CHURN_DEPTH}, "
                             f"{ht_bytes / 1e6:.0f} MB file)", printed,
                             f"{2 * args.heaptrack_allocations / printed.wall_s / 1e6:.0f} M events/s"))
    except measure.BenchError as error:
        print(f"scripts/bench --large: {error}", file=sys.stderr)
        print(f"scripts/bench --large: logs are in {work_dir}", file=sys.stderr)
        return 1
    finally:
        if not args.keep and not args.dir:
            for name in os.listdir(work_dir):
                if name.endswith((".dat", ".zst", ".gz")):
                    os.unlink(os.path.join(work_dir, name))
    load = os.getloadavg()[0]
    say(f"\n`memrec` on {os.path.basename(dump)}: {size / 1e9:.2f} GB, {events:,} events, {allocations:,} "
        f"allocations; {os.cpu_count()} cores, 1-minute load average {load:.1f} at the end\n")
    say("| step | wall s | CPU s | peak RSS MiB | note |\n|---|--:|--:|--:|---|")
    for line in lines:
        say(line)
    if not args.keep and not args.dir:
        shutil.rmtree(work_dir, ignore_errors=True)
    else:
        say(f"\nthe dumps are in {work_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
