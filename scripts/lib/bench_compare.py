"""scripts/bench --compare MEMREC_NAME=A,B: memrec under two or more values of
one setting, side by side. Each repetition runs each workload without a
profiler and under memrec with every value, in an order that rotates, so
the machine's load falls on all alike; no heaptrack. Prints, per workload and
value, medians (min-max) of the CPU ratio, the CPU recording added per event,
the recorder threads' part of it and the hooks' (the rest), and the dump's
bytes per event. Used by bench.py only; standard library only.
"""

import os
import statistics

import bench_measure as measure
import bench_workloads as workloads_mod


def parse(text):
    """MEMREC_NAME=A,B -> (name, [A, B])."""
    name, sep, values = text.partition("=")
    if not sep or not name.startswith("MEMREC_") or len(values.split(",")) < 2:
        raise ValueError(f"--compare {text}: expected MEMREC_NAME=VALUE,VALUE[,...]")
    return name, values.split(",")


def one_run(launcher, memrec, workload, preload, work_dir, log):
    run, dumps = measure.run_memrec(launcher, workload, preload, work_dir, log)
    recorder = measure.memrec_recorder_threads(memrec, dumps)
    entry = {"wall_s": run.wall_s, "cpu_s": run.cpu_s, "events": recorder["events"],
             "recorder_cpu_s": sum(t["cpu_ns"] for t in recorder["threads"]) / 1e9,
             "bytes": measure.file_bytes(dumps)}
    for path in dumps:
        os.unlink(path)
    return entry


def spread(values, fmt):
    values = sorted(values)
    return f"{fmt.format(statistics.median(values))} ({fmt.format(values[0])}–{fmt.format(values[-1])})"


def compare(args, paths, work_dir, say):
    name, values = parse(args.compare)
    chosen = workloads_mod.select(
        workloads_mod.all_workloads(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                    args.build_dir, work_dir, args.quick), args.only)
    launcher = measure.Launcher(paths["rusage_run"])
    runs = {w.name: {v: [] for v in ["base", *values]} for w in chosen}
    for rep in range(args.reps):
        say(f"== repetition {rep + 1}/{args.reps} ==")
        for w in chosen:
            order = ["base", *values]
            order = order[rep % len(order):] + order[:rep % len(order)]
            for v in order:
                log = os.path.join(work_dir, f"{w.name}.{v}")
                if v == "base":
                    base = measure.run_baseline(launcher, w, log)
                    runs[w.name]["base"].append({"wall_s": base.wall_s, "cpu_s": base.cpu_s})
                    continue
                measure.MEMREC_ENV[name] = v
                runs[w.name][v].append(one_run(launcher, paths["memrec"], w, paths["preload"], work_dir, log))
            say(f"  {w.name:<10} base {runs[w.name]['base'][-1]['cpu_s']:.2f} s CPU, " + ", ".join(
                f"{v} {runs[w.name][v][-1]['cpu_s']:.2f} s" for v in values))
    say(f"\n{name}: median (min–max) of {args.reps}; ns per event of the CPU recording added, "
        "split into the recorder threads' and the hooks' (the rest)\n")
    say("| workload | " + name + " | CPU× | wall× | recorder ns/event | threads ns/event | hooks ns/event "
        "| bytes/event |")
    say("| --- | --- | --: | --: | --: | --: | --: | --: |")
    for w in chosen:
        base_cpu = statistics.median(r["cpu_s"] for r in runs[w.name]["base"])
        base_wall = statistics.median(r["wall_s"] for r in runs[w.name]["base"])
        for v in values:
            rs = runs[w.name][v]
            added = [(r["cpu_s"] - base_cpu) * 1e9 / r["events"] for r in rs]
            threads = [r["recorder_cpu_s"] * 1e9 / r["events"] for r in rs]
            hooks = [a - t for a, t in zip(added, threads)]
            say(f"| {w.name} | {v} | {spread([r['cpu_s'] / base_cpu for r in rs], '{:.2f}')} "
                f"| {spread([r['wall_s'] / base_wall for r in rs], '{:.2f}')} | {spread(added, '{:.0f}')} "
                f"| {spread(threads, '{:.0f}')} | {spread(hooks, '{:.0f}')} "
                f"| {spread([r['bytes'] / r['events'] for r in rs], '{:.2f}')} |")
