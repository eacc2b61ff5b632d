"""Times `memrec view`'s API on a big dump: starts `memrec view --port 0`,
asks every endpoint (median of --reps), prints a table with the load time,
the view's peak RSS and the allocation table's bytes per allocation
(docs/api.md), and for a dump served before its allocation table (over
128 MiB) when the table was ready. Run by `scripts/bench --only view`, or directly:
/usr/bin/python3 scripts/lib/bench_view.py --build-dir BUILD [--dump FILE].
Without --dump it records bench/churn's churn-20m workload (10 M malloc+free,
20 M events) first. Standard library only; a benchmark, not a test."""
from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time

CHURN_DEPTH = 21  # as scripts/lib/bench_workloads.py
TARGET_MS = 200


def record_churn(build_dir, work_dir, allocs):
    dump = os.path.join(work_dir, "churn-view.dat")
    env = dict(os.environ, LD_PRELOAD=os.path.join(build_dir, "preload", "libmemrec.so"), MEMREC_OUTPUT=dump)
    argv = [os.path.join(build_dir, "bench", "churn"), str(allocs), "1", str(CHURN_DEPTH)]
    print(f"recording {' '.join(argv[1:])} (churn-20m) ...", flush=True)
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return dump


def start_view(memrec, dump):
    env = dict(os.environ, MEMREC_VIEW_STATS="1")
    env.pop("LD_PRELOAD", None)
    started = time.monotonic()
    proc = subprocess.Popen([memrec, "view", "--port", "0", "--no-progress", dump], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = b""
    while proc.poll() is None:
        ready, _, _ = select.select([proc.stdout], [], [], 0.5)
        if ready:
            line += proc.stdout.readline()
            match = re.search(rb"http://127\.0\.0\.1:(\d+)/", line)
            if match:
                # It listens before it loads: served once the dump list says so.
                port = int(match.group(1))
                while json.loads(get(port, "/api/dumps")[1])["dumps"][0]["state"] == "loading":
                    time.sleep(0.2)
                return proc, port, started, time.monotonic() - started
    raise SystemExit(f"bench_view: memrec view exited: {proc.stderr.read().decode(errors='replace')}")


def wait_for_tables(port, started):
    """Seconds from the start until every dump's allocation table is built
    (memrec view serves a large dump before it)."""
    while True:
        dumps = json.loads(get(port, "/api/dumps")[1])["dumps"]
        states = [d.get("table", {}).get("state") for d in dumps]
        if "failed" in states:
            raise SystemExit(f"bench_view: no allocation table: {dumps}")
        if all(state == "ready" for state in states):
            return time.monotonic() - started
        time.sleep(0.2)


def peak_rss_mib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        t0 = time.perf_counter()
        conn.request("GET", path)
        response = conn.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - t0
        if response.status != 200:
            raise SystemExit(f"bench_view: GET {path}: HTTP {response.status}: {body[:200]!r}")
        return elapsed * 1000, body
    finally:
        conn.close()


def first_paint_ms(port, reps):
    """The overview's first paint in chromium (tests/browser/paint_bench.mjs),
    or None where node, chromium or tests/browser's packages are missing."""
    browser_dir = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "browser")
    if not os.path.isdir(os.path.join(browser_dir, "node_modules", "playwright-core")):
        return None
    try:
        out = subprocess.run(["node", "paint_bench.mjs", f"http://127.0.0.1:{port}", str(reps)], cwd=browser_dir,
                             capture_output=True, text=True, timeout=300, check=True).stdout
    except (OSError, subprocess.SubprocessError) as error:
        print(f"bench_view: no first-paint figure: {error}", file=sys.stderr)
        return None
    return json.loads(out.strip().splitlines()[-1])["first_paint_ms"]


def endpoints(port):
    summary = json.loads(get(port, "/api/dumps/0/summary")[1])
    end = summary["duration_ns"]
    peak = summary["peak"]["time_ns"] or end // 2
    mid_from, mid_to = end // 4, end // 2
    site = json.loads(get(port, "/api/dumps/0/sites?sort=allocated&limit=1")[1])["sites"][0]["id"]
    rng = f"from={mid_from}&to={mid_to}"
    return [
        ("dumps", "/api/dumps"),
        ("summary (whole run)", "/api/dumps/0/summary"),
        ("summary (a range)", f"/api/dumps/0/summary?{rng}"),
        ("timeline (whole run)", "/api/dumps/0/timeline"),
        ("timeline (a range)", f"/api/dumps/0/timeline?{rng}"),
        ("sites sort=peak", "/api/dumps/0/sites?sort=peak"),
        ("sites a range, spark=64", f"/api/dumps/0/sites?sort=allocated&spark=64&{rng}"),
        ("sites sort=live at=T", f"/api/dumps/0/sites?sort=live&at={peak}"),
        ("sites whole run, spark=128, limit=1000", "/api/dumps/0/sites?sort=allocated&spark=128&limit=1000"),
        ("flame metric=allocated", "/api/dumps/0/flame?metric=allocated"),
        ("flame metric=live at=T", f"/api/dumps/0/flame?metric=live&at={peak}"),
        ("instant at=T", f"/api/dumps/0/instant?at={peak}"),
        ("allocations (first page)", "/api/dumps/0/allocations"),
        ("allocations order=desc", "/api/dumps/0/allocations?order=desc"),
        ("allocations sort=size desc", "/api/dumps/0/allocations?sort=size&order=desc"),
        ("allocations sort=lifetime, range", f"/api/dumps/0/allocations?sort=lifetime&{rng}"),
        ("allocations alive_at=T", f"/api/dumps/0/allocations?alive_at={peak}"),
        ("allocations min_size, match", "/api/dumps/0/allocations?min_size=1000&match=churn"),
        ("allocations site=ID offset", f"/api/dumps/0/allocations?site={site}&offset=100000"),
        ("allocations sort=address offset=20000", "/api/dumps/0/allocations?sort=address&offset=20000"),
        ("allocations sort=size desc offset=5000000", "/api/dumps/0/allocations?sort=size&order=desc&offset=5000000"),
        ("allocations sort=lifetime offset=9999900", "/api/dumps/0/allocations?sort=lifetime&offset=9999900"),
        ("allocations realloc=1", "/api/dumps/0/allocations?realloc=1"),
        ("allocations/{index}", "/api/dumps/0/allocations/12345"),
        ("threads", "/api/dumps/0/threads"),
        ("diff/flame (itself)", "/api/diff/flame?base=0&new=0&metric=allocated"),
        ("diff/sites (a range against the rest)",
         f"/api/diff/sites?base=0&new=0&metric=allocated&base_from={mid_from}&base_to={mid_to}&new_from={mid_to}"),
    ]


def main(argv):
    parser = argparse.ArgumentParser(prog="bench_view", description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", required=True)
    parser.add_argument("--dump", help="a dump to view (default: record churn-20m)")
    parser.add_argument("--allocs", type=int, default=10_000_000, help="churn's malloc+free pairs (default 10 M)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="200,000 pairs, 1 repetition")
    args = parser.parse_args(argv)
    if args.quick:
        args.allocs, args.reps = 200_000, 1
    build_dir = os.path.abspath(args.build_dir)
    memrec = os.path.join(build_dir, "analyzer", "memrec")
    with tempfile.TemporaryDirectory(prefix="memrec-bench-view.") as work_dir:
        dump = args.dump or record_churn(build_dir, work_dir, args.allocs)
        proc, port, started, load_s = start_view(memrec, dump)
        try:
            table_s = wait_for_tables(port, started)
            rows = []
            for name, path in endpoints(port):
                times = [get(port, path)[0] for _ in range(args.reps)]
                rows.append((name, path, statistics.median(times), max(times)))
            paint = first_paint_ms(port, args.reps)
            rss = peak_rss_mib(proc.pid)
        finally:
            proc.terminate()
            _, err = proc.communicate(timeout=30)
    stats = re.search(rb"(\d+) allocations, table (\d+) bytes \((\d+) a row\)", err)
    size_mb = os.path.getsize(dump) / 2**20 if os.path.exists(dump) else 0
    print(f"\n`memrec view` on {os.path.basename(dump)}"
          + (f" ({size_mb:.0f} MiB)" if size_mb else "")
          + f": served after {load_s:.1f} s, every view ready after {table_s:.1f} s, peak RSS {rss:.0f} MiB"
          + (f", {int(stats.group(1)):,} allocations, table {int(stats.group(2)) / 2**20:.0f} MiB "
             f"= {int(stats.group(3))} bytes an allocation" if stats else ""))
    if paint:
        flag = "" if statistics.median(paint) < 1000 else " (over 1 s)"
        print(f"First paint of the overview after load (chromium, fresh context): median "
              f"{statistics.median(paint):.0f} ms{flag}, slowest {max(paint):.0f} ms")
    print(f"1-minute load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; the slowest run of a "
          "range's figures is the uncached one (the last 8 ranges are cached per dump).")
    print(f"\n| endpoint | median of {args.reps} (ms) | slowest (ms) |\n|---|---:|---:|")
    for name, _, median, slowest in rows:
        flag = "" if median < TARGET_MS else f" (over {TARGET_MS} ms)"
        print(f"| {name} | {median:.1f}{flag} | {slowest:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
