"""Following a dump while a program under the preload writes it
(analyzer/load/dump_follower.h, reports/followed_report.h): the report grows
as the program runs, and once the program has exited the followed report is
`memrec report --json` of the finished file. follow_benchmark steps the
follower as memrec view --follow will, and says what the steps cost."""
from __future__ import annotations

import json
import subprocess
import time

import memrec_support as support


def follow_while_recording(build, tmp_path, program, args, env=None, interval_ms=100, table=False):
    """Starts `program` under the preload and follow_benchmark on its dump
    once the dump exists (with `table`, growing the allocation table too);
    returns (the program's Run, the benchmark's JSON)."""
    out_dir = support.fresh_dir(tmp_path, "memrec-out")
    dat = out_dir / "live.dat"
    extra = {"LD_PRELOAD": str(build.preload), "MEMREC_OUTPUT": str(dat), "MEMREC_FLUSH_INTERVAL_MS": "100"}
    extra.update(env or {})
    argv = [str(build.program(program)), *map(str, args)]
    proc = support.start(argv, support.clean_env(extra), cwd=out_dir)
    bench_argv = [str(build.root / "tests" / "unit" / "follow_benchmark"), str(dat), "--interval-ms",
                  str(interval_ms), "--timeout-s", "240", "--check", *(["--table"] if table else [])]
    bench = subprocess.run(bench_argv, capture_output=True, text=True, timeout=300)
    run = support.finish(proc, argv, 60)
    assert run.returncode == 0, run.describe()
    assert bench.returncode == 0, f"{bench_argv}\n--- stdout\n{bench.stdout}--- stderr\n{bench.stderr}"
    return run, json.loads(bench.stdout)


def test_a_service_followed_live_grows_and_ends_as_its_finished_report(build, tmp_path):
    # given growth_service's 3 s of ticks, its cache growing every 10 ms
    run, result = follow_while_recording(build, tmp_path, "growth_service", [300, "exit"])
    # then the followed report grew over several steps while it ran
    assert result["steps"] >= 5, result
    assert result["growing_reports"] >= 3, result
    # and its final report is the finished file's, figure for figure
    assert result["same_report"] is True, result
    assert result["events"] > 300 * 4, result


def test_a_multithreaded_churn_followed_live_ends_as_its_finished_report(build, tmp_path):
    # given 16 threads allocating and freeing at once, 800,000 blocks, whose events reach
    # the frames in batches per thread (so frames overlap in time)
    run, result = follow_while_recording(build, tmp_path, "cross_free_threads", [16, 50000])
    # then every event was handed on in the finished file's order
    assert result["same_report"] is True, result
    assert result["events"] >= 2 * 16 * 50000, result


def test_a_multithreaded_churn_followed_with_its_table_ends_as_the_finished_files_table(build, tmp_path):
    # given 16 threads allocating and freeing at once, followed with the allocation table grown at every step
    run, result = follow_while_recording(build, tmp_path, "cross_free_threads", [16, 50000], table=True)
    # then the report and every window of the table are the finished file's
    assert result["same_report"] is True, result
    assert result["same_table"] is True, result
    assert result["events"] >= 2 * 16 * 50000, result
    assert result["table_bytes"] > 0, result
