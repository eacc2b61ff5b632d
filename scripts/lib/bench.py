#!/usr/bin/python3
"""scripts/bench: memrec against heaptrack on allocation-heavy workloads.

Run through scripts/bench, which builds first. For each repetition and each
workload it runs the program without a profiler, under heaptrack and under
memrec (the order rotates between repetitions), then heaptrack_print and the
memrec analyzer on that repetition's files, measuring every process with wait4
through bench/rusage_run (wall time, user+sys time, ru_maxrss). It writes
medians and min–max to docs/performance.md below the generated-part marker.
--quick runs tiny sizes once and writes BUILD/bench-quick.md instead, for
./scripts/test (--only: BUILD/bench-partial.md); --perf profiles memrec on
churn-1t with perf instead. After the repetitions, valgrind's heap profilers
(massif and DHAT) run each churn and program workload once, beside a run
without a profiler and one under memrec (--no-valgrind skips them; --quick
runs them on churn-1t only). Standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_measure as measure  # noqa: E402
import bench_report as report  # noqa: E402
import bench_workloads as workloads_mod  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(REPO, "docs", "performance.md")
MODES = ("base", "heaptrack", "memrec")


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="scripts/bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, 1 repetition, output to a temporary file (what ./scripts/test runs)")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (default 5; 1 with --quick)")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this workload or group (churn, depth, threads, program); repeatable; "
                        "`--only view` times memrec view's API instead (scripts/lib/bench_view.py)")
    parser.add_argument("--output", help="markdown file to write (default docs/performance.md; "
                        "BUILD/bench-quick.md with --quick, BUILD/bench-partial.md with --only)")
    parser.add_argument("--perf", action="store_true",
                        help="instead of benchmarking, profile memrec on churn-1t with perf record and print "
                        "the hottest symbols")
    parser.add_argument("--render", metavar="JSON",
                        help="measure nothing: write the tables again from the raw results of an earlier run "
                        "(BUILD/bench-results.json), e.g. after changing how they are presented")
    parser.add_argument("--no-valgrind", action="store_true",
                        help="skip the runs under valgrind's massif and DHAT (once per workload, 20-140× slower)")
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"), help="meson build directory")
    parser.add_argument("--large", action="store_true",
                        help="instead, time memrec report and view on a multi-GB dump (scripts/lib/bench_large.py; "
                        "`--large --help` lists its options, --large-allocations N among them)")
    parser.add_argument("--memrec-env", action="append", default=[], metavar="MEMREC_NAME=VALUE",
                        help="set for the runs under memrec (MEMREC_STAMP=tsc), to compare a setting with "
                        "another run's; repeatable")
    parser.add_argument("--compare", metavar="MEMREC_NAME=A,B",
                        help="instead, memrec with each value of the setting side by side, interleaved, without "
                        "heaptrack: CPU ratios and ns per event, printed (scripts/lib/bench_compare.py)")
    args = parser.parse_args(argv)
    for pair in args.memrec_env:
        name, sep, value = pair.partition("=")
        if not sep or not name.startswith("MEMREC_"):
            parser.error(f"--memrec-env {pair}: expected MEMREC_NAME=VALUE")
        measure.MEMREC_ENV[name] = value
    if args.reps is None:
        args.reps = 1 if args.quick else 5
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    return args


def say(text):
    print(text, flush=True)


def tool_paths(build_dir):
    paths = {"memrec": os.path.join(build_dir, "analyzer", "memrec"),
             "preload": os.path.join(build_dir, "preload", "libmemrec.so"),
             "churn": os.path.join(build_dir, "bench", "churn"),
             "rusage_run": os.path.join(build_dir, "bench", "rusage_run"),
             "core_pingpong": os.path.join(build_dir, "bench", "core_pingpong")}
    missing = [p for p in paths.values() if not os.path.exists(p)]
    missing += [p for p in (measure.HEAPTRACK_PRELOAD, measure.HEAPTRACK_INTERPRET) if not os.path.exists(p)]
    missing += [t for t in ("heaptrack_print", "g++", "sqlite3") if shutil.which(t) is None]
    if missing:
        raise measure.BenchError("missing: " + ", ".join(missing) +
                                 " (scripts/setup installs the Debian packages; scripts/bench builds the rest)")
    return paths


def first_line(argv):
    try:
        out = subprocess.run(argv, capture_output=True, text=True, env=measure.clean_env())
        return (out.stdout or out.stderr).strip().splitlines()[0]
    except (OSError, IndexError):
        return "unknown"


def cross_cpu_ns(path):
    """A cache line's round trip between two CPUs now (bench/core_pingpong), or
    None with fewer than two CPUs. memrec's overhead follows it (see the tool)."""
    try:
        out = subprocess.run([path], capture_output=True, text=True, timeout=60, env=measure.clean_env())
        return float(out.stdout) if out.returncode == 0 else None
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return None


def cross_cpu_line(results):
    times = sorted(rep["cross_cpu_ns"] for r in results.values() for rep in r["reps"]
                   if rep.get("cross_cpu_ns") is not None)
    if not times:
        return ""
    return (f" A cache line's round trip between two CPUs, measured before each workload of each repetition "
            f"(bench/core_pingpong): median {times[len(times) // 2]:.0f} ns, {times[0]:.0f}–{times[-1]:.0f}; "
            f"memrec's runs are slower where it is high.")


def environment_lines(load_before, results):
    commit = first_line(["git", "-C", REPO, "describe", "--always", "--dirty"])
    cpu = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem_gib = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    load_after = os.getloadavg()[0]
    settings = "".join(f" with {name}={value}" for name, value in sorted(measure.MEMREC_ENV.items()))
    return [
        f"Measured {datetime.date.today().isoformat()} on {cpu}, {os.cpu_count()} cores, {mem_gib:.0f} GiB, "
        f"Linux {platform.release()}; memrec {commit}{settings}; {first_line(['heaptrack', '--version'])} "
        f"(its file compressed with {measure.COMPRESSOR[0]}); "
        f"{first_line(['g++', '--version'])}; sqlite {first_line(['sqlite3', '--version']).split()[0]}; "
        f"{first_line(['/usr/bin/python3', '--version'])}. "
        f"1-minute load average {load_before:.1f} before the run, {load_after:.1f} after." + cross_cpu_line(results),
    ]


def run_once(launcher, workload, mode, paths, work_dir):
    log = os.path.join(work_dir, f"{workload.name}.{mode}")
    if mode == "base":
        return {"base": measure.run_baseline(launcher, workload, log)}
    if mode == "heaptrack":
        whole, target, path = measure.run_heaptrack(launcher, workload, work_dir, log)
        return {"heaptrack": whole, "heaptrack_target": target, "heaptrack_file": path}
    run, dumps = measure.run_memrec(launcher, workload, paths["preload"], work_dir, log)
    return {"memrec": run, "memrec_files": dumps}


def run_repetition(launcher, workload, paths, command, work_dir, rep, result):
    modes = MODES[rep % 3:] + MODES[:rep % 3]  # rotate, so no mode always runs first
    cross_cpu = cross_cpu_ns(paths["core_pingpong"])
    runs = {}
    for mode in modes:
        runs.update(run_once(launcher, workload, mode, paths, work_dir))
    ht_file, mr_files = runs.pop("heaptrack_file"), runs.pop("memrec_files")
    log = os.path.join(work_dir, workload.name)
    runs["heaptrack_print"] = measure.run_heaptrack_print(launcher, ht_file, log + ".heaptrack_print")
    runs["memrec_analyzer"] = measure.run_memrec_analyzer(launcher, paths["memrec"], command, mr_files,
                                                          log + ".analyzer")
    entry = {k: vars(v) for k, v in runs.items()}
    entry["heaptrack_bytes"] = measure.file_bytes([ht_file])
    entry["memrec_bytes"] = measure.file_bytes(mr_files)
    entry["cross_cpu_ns"] = cross_cpu
    if workload.group == "threads":  # the recorder's own threads: each run's, for the thread sweep
        entry["recorder"] = measure.memrec_recorder_threads(paths["memrec"], mr_files)
    if "counts" not in result:  # deterministic workloads: one repetition's counts stand for all
        result["counts"] = {"memrec": measure.memrec_counts(paths["memrec"], mr_files),
                            "heaptrack": measure.heaptrack_counts(ht_file)}
    for path in [ht_file, *mr_files]:
        os.unlink(path)
    result["reps"].append(entry)
    say(f"  {workload.name:<9} base {entry['base']['wall_s']:.2f} s, heaptrack {entry['heaptrack']['wall_s']:.2f} s, "
        f"memrec {entry['memrec']['wall_s']:.2f} s; heaptrack_print {entry['heaptrack_print']['wall_s']:.2f} s, "
        f"memrec {command} {entry['memrec_analyzer']['wall_s']:.2f} s"
        + (f"; cross-CPU round trip {cross_cpu:.0f} ns" if cross_cpu is not None else ""))


def run_valgrind(launcher, chosen, paths, work_dir, results):
    """Each workload once without a profiler, under memrec, massif and DHAT, back
    to back: one run each, since DHAT takes minutes where the others take
    seconds, and the ratios come from runs minutes apart at most."""
    say("== valgrind: massif and DHAT, one run each ==")
    for w in chosen:
        log = os.path.join(work_dir, w.name + ".valgrind")
        entry = {"base": vars(measure.run_baseline(launcher, w, log + ".base"))}
        run, dumps = measure.run_memrec(launcher, w, paths["preload"], work_dir, log + ".memrec")
        entry["memrec"] = vars(run)
        for path in dumps:
            os.unlink(path)
        for tool in ("massif", "dhat"):
            out = os.path.join(work_dir, f"{w.name}.{tool}.out")
            argv = ["valgrind", "-q", f"--tool={tool}", f"--{tool}-out-file={out}", *w.argv]
            entry[tool] = vars(launcher.measure(argv, w.env, f"{log}.{tool}"))
            if os.path.exists(out):
                os.unlink(out)
        results[w.name]["valgrind"] = entry
        say(f"  {w.name:<9} base {entry['base']['wall_s']:.2f} s, memrec {entry['memrec']['wall_s']:.2f} s, "
            f"massif {entry['massif']['wall_s']:.2f} s, DHAT {entry['dhat']['wall_s']:.2f} s")


def benchmark(args, paths, work_dir):
    chosen = workloads_mod.select(
        workloads_mod.all_workloads(REPO, args.build_dir, work_dir, args.quick), args.only)
    command = measure.memrec_analyzer_command(paths["memrec"])
    launcher = measure.Launcher(paths["rusage_run"])
    load_before = os.getloadavg()[0]
    results = {w.name: {"group": w.group, "describe": w.describe, "stack_frames": w.stack_frames,
                        "threads": w.threads, "reps": []}
               for w in chosen}
    if not args.quick:
        say("== warm-up: each workload once without a profiler ==")
        for w in chosen:
            measure.run_baseline(launcher, w, os.path.join(work_dir, w.name + ".warmup"))
    for rep in range(args.reps):
        say(f"== repetition {rep + 1}/{args.reps} ==")
        for w in chosen:
            run_repetition(launcher, w, paths, command, work_dir, rep, results[w.name])
    if not args.no_valgrind and shutil.which("valgrind"):
        # churn-20m is churn-1t twice over, which DHAT would take minutes for.
        under_valgrind = [w for w in chosen if w.group not in ("depth", "threads") and w.name != "churn-20m"]
        run_valgrind(launcher, under_valgrind[:1] if args.quick else under_valgrind, paths, work_dir, results)
    kind = "quick" if args.quick else "partial" if args.only else "results"
    raw = os.path.join(args.build_dir, f"bench-{kind}.json")
    measured = {"environment": environment_lines(load_before, results), "command": command, "reps": args.reps,
                "results": results}
    with open(raw, "w") as f:
        json.dump(measured, f, indent=1)
    say(f"Raw results: {raw}")
    output = args.output
    if output is None:
        output = DOC if kind == "results" else os.path.join(args.build_dir, f"bench-{kind}.md")
    publish(measured, output)
    if args.quick:
        check_quick(output, results)


def publish(measured, output):
    generated = report.render(measured["results"], measured["environment"], measured["command"], measured["reps"])
    report.write_document(output, generated)
    say(f"Wrote {output}")


def check_quick(path, results):
    """The quick run's job: prove that every table got a row per workload."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    missing = [name for name in results if f"`{name}`" not in text]
    if missing or report.GENERATED_MARKER not in text or "### Targets" not in text:
        raise measure.BenchError(f"{path} lacks rows for {', '.join(missing) or 'the targets'}")


def profile(args, paths, work_dir):
    """perf record -g on churn-1t under memrec; prints the hottest symbols."""
    import bench_profile  # noqa: E402 - only this mode needs it
    workload = workloads_mod.select(
        workloads_mod.all_workloads(REPO, args.build_dir, work_dir, args.quick), ["churn-1t"])[0]
    bench_profile.perf_profile(workload, paths["preload"], work_dir, os.path.join(args.build_dir, "bench-perf.data"))


def main(argv):
    if "--large" in argv:  # the analyzer on a multi-GB dump: scripts/lib/bench_large.py
        import bench_large  # noqa: E402 - only this mode needs it
        if not any(a.startswith("--build-dir") for a in argv):
            argv = argv + ["--build-dir", os.path.join(REPO, "build")]
        return bench_large.main(argv)
    args = parse_args(argv)
    args.build_dir = os.path.abspath(args.build_dir)
    started = time.monotonic()
    if args.render:
        with open(args.render, encoding="utf-8") as f:
            publish(json.load(f), args.output or DOC)
        return 0
    if args.only == ["view"]:  # memrec view's API timings: scripts/lib/bench_view.py
        import bench_view  # noqa: E402 - only this mode needs it
        return bench_view.main(["--build-dir", args.build_dir] + (["--quick"] if args.quick else []))
    work_dir = tempfile.mkdtemp(prefix="memrec-bench.")
    try:
        paths = tool_paths(args.build_dir)
        if args.perf:
            profile(args, paths, work_dir)
        elif args.compare:
            import bench_compare  # noqa: E402 - only this mode needs it
            bench_compare.compare(args, paths, work_dir, say)
        else:
            benchmark(args, paths, work_dir)
    except (measure.BenchError, ValueError, subprocess.CalledProcessError) as error:
        print(f"scripts/bench: {error}", file=sys.stderr)
        if os.listdir(work_dir):
            print(f"scripts/bench: logs are in {work_dir}", file=sys.stderr)
        else:
            os.rmdir(work_dir)
        return 1
    except KeyboardInterrupt:
        shutil.rmtree(work_dir, ignore_errors=True)  # dumps of hundreds of MiB
        return 130
    shutil.rmtree(work_dir, ignore_errors=True)  # kept above when something failed, for its logs
    say(f"scripts/bench: done in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
