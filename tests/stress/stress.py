#!/usr/bin/python3
"""The runtime half of scripts/stress (stdlib only): runs programs under
libmemrec.so in ways that are too slow for ./scripts/test, checks every dump
with `memrec info --json`, and prints one summary table.

  sigkill   sigkill_loop (4 threads allocating) SIGKILLed at a random moment,
            --kills times: each dump reads, is cut (no End), and lost at most
            the last second of events (the recorder writes a frame a second)
  threads   cross_free_threads: --threads threads at once, every block freed
            by another thread than its malloc: no unmatched free, exact leaks
  forks     fork_storm --forks children without exec, then with exec, while a
            thread allocates: every process's dump reads, ends cleanly, and
            holds exactly its own leak
  corpus    every input in --corpus (the fuzzer's) through `memrec info` and
            `memrec report`, text and JSON: read, or rejected in one line
  real      python3, perl, sqlite3, git, g++, redis-server and a pipeline at
            --real-scale times the integration tests' sizes (stress_real.py)
  faults    a full disk, `ulimit -f` and a deleted dump, --fault-repeats
            times each at random sizes and moments (stress_real.py)
  servers   tests/integration/test_postgres.py and test_nginx.py (pytest)
            at --server-scale times their sizes: pgbench with N x 4 clients of
            N x 100 transactions, N nginx reloads with N x 150 requests each

Every process runs in a session of its own with a timeout; a hang fails its
scenario. Exits 1 if any scenario (or the fuzz run passed in by scripts/stress)
failed.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from stress_real import Faults, RealPrograms

TIMEOUT_S = 600
# The recorder writes a frame at least once a second; allow the writer thread
# this much more to compress and write it on a loaded machine.
LOSS_SLACK_S = 0.25


@dataclasses.dataclass
class Row:
    scenario: str
    runs: str
    ok: bool
    details: str
    seconds: float = 0.0


@dataclasses.dataclass
class Finished:
    pid: int
    returncode: int
    stdout: str
    stderr: str


def clean_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREC_") and k != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    env.update(extra)
    return env


def kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def start(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
    return subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True, text=True, errors="replace")


def finish(proc: subprocess.Popen, timeout: float = TIMEOUT_S) -> Finished:
    """Waits for `proc`; past `timeout` kills its session and raises."""
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        proc.communicate()
        raise RuntimeError(f"{proc.args[0]} hung: killed after {timeout} s") from None
    kill_group(proc)  # children that outlived it
    return Finished(proc.pid, proc.returncode, out, err)


class Stress:
    def __init__(self, build: Path, work: Path, env: dict[str, str] | None = None):
        self.build = build
        self.env = env or {}  # MEMREC_* for every recorded run (--env)
        self.programs = build / "tests" / "programs"
        self.work = work
        self.memrec = build / "analyzer" / "memrec"
        self.preload = build / "preload" / "libmemrec.so"

    def out_dir(self, name: str) -> Path:
        return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=self.work))

    def record(self, argv: list[str], out_dir: Path) -> subprocess.Popen:
        env = clean_env({**self.env, "LD_PRELOAD": str(self.preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat")})
        return start(argv, env, cwd=out_dir)

    def info(self, dats: list[Path]) -> list[dict]:
        """`memrec info --json` of the dumps; raises unless it exits 0."""
        run = finish(start([str(self.memrec), "info", "--json", *map(str, dats)], clean_env({})))
        if run.returncode != 0:
            raise RuntimeError(f"memrec info exited {run.returncode}: {run.stderr.strip()[:300]}")
        result = json.loads(run.stdout)
        return result if isinstance(result, list) else [result]

    # --- function names, as the integration tests get them ------------------

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def function_at(module: str, offset: int) -> str:
        out = subprocess.run(["addr2line", "-f", "-e", module, hex(offset - 1)], capture_output=True, text=True,
                             timeout=60, check=False).stdout
        return (out.splitlines() or ["??"])[0].strip()

    def leaks_by_function(self, dump: dict, exe: Path) -> dict[str, tuple[int, int]]:
        """{function: (count, bytes)} by the innermost frame in `exe`."""
        result: dict[str, tuple[int, int]] = {}
        real = os.path.realpath(exe)
        for leak in dump["leaks"]:
            frame = next((f for f in leak["frames"] if f.get("module") and os.path.realpath(f["module"]) == real),
                         None)
            if frame is None:
                continue
            name = self.function_at(frame["module"], int(frame["offset"]))
            count, size = result.get(name, (0, 0))
            result[name] = (count + leak["count"], size + leak["bytes"])
        return result

    # --- scenarios --------------------------------------------------------------

    def corpus(self, corpus: Path) -> Row:
        """Every input the fuzzer kept, through every subcommand that reads
        dumps: exit 0, or exit 2 with one line naming the file; in time;
        anything else on stderr is a `memrec: ` warning, never a crash."""
        commands = sweep_commands(self.memrec)
        inputs = sorted(p for p in corpus.iterdir() if p.is_file())
        outcomes = {0: 0, 2: 0}
        problems: list[str] = []
        for path in inputs:
            for cmd in commands:
                run = finish(start([str(self.memrec), *cmd, str(path)], clean_env({})), 60)
                lines = [line for line in run.stderr.splitlines() if line.strip()]
                # `report` may add one line per module it cannot symbolize (the
                # frames before a corrupt one are still reported).
                named = [line for line in lines if line.startswith(f"memrec: {path}: ")]
                clean = all(line.startswith("memrec: ") for line in lines) and "internal error" not in run.stderr
                if clean and (run.returncode == 0 or (run.returncode == 2 and len(named) == 1)):
                    outcomes[run.returncode] += 1
                else:
                    problems.append(f"{' '.join(cmd)} {path.name}: exit {run.returncode}: {run.stderr.strip()[:200]}")
        details = (f"{len(inputs)} inputs x {' | '.join(' '.join(c) for c in commands)}: "
                   f"{outcomes[0]} read, {outcomes[2]} rejected with one line naming the file")
        if problems:
            details += f"; {len(problems)} problems: " + "; ".join(problems[:3])
        return Row("analyzer over the fuzz corpus", f"{len(inputs) * len(commands)}", not problems and inputs != [],
                   details)

    def sigkill(self, kills: int, rng: random.Random) -> Row:
        exe = self.build / "tests" / "programs" / "sigkill_loop"
        read = cut = 0
        worst_loss_s = 0.0
        problems: list[str] = []
        for i in range(kills):
            out_dir = self.out_dir(f"sigkill-{i}")
            proc = self.record([str(exe)], out_dir)
            try:
                time.sleep(rng.uniform(0.05, 4.0))
                killed_at_ns = time.monotonic_ns()  # CLOCK_MONOTONIC, the dump's clock
                os.kill(proc.pid, signal.SIGKILL)
                run = finish(proc, 60)
            finally:
                kill_group(proc)
            dats = sorted(out_dir.iterdir())
            if run.returncode != -signal.SIGKILL or len(dats) != 1:
                problems.append(f"run {i}: exit {run.returncode}, {len(dats)} dumps")
                continue
            try:
                dump = self.info(dats)[0]
            except RuntimeError as error:
                problems.append(f"run {i}: {error}")
                continue
            finally:
                shutil.rmtree(out_dir)  # tens of MiB each
            read += 1
            cut += dump["clean_end"] is False
            # The last event in the dump against the kill: what was lost.
            last_event_ns = dump["header"]["start_mono_ns"] + dump["duration_ns"]
            loss_s = max(0.0, (killed_at_ns - last_event_ns) / 1e9)
            worst_loss_s = max(worst_loss_s, loss_s)
            if loss_s > 1.0 + LOSS_SLACK_S:
                problems.append(f"run {i}: lost the last {loss_s:.2f} s")
            # And the program's own count: every allocation made more than that
            # before the kill is in the dump.
            markers = [tuple(map(int, line.split()[1:])) for line in run.stdout.splitlines()
                       if line.startswith("marker ")]
            old = [count for when_ns, count in markers if when_ns <= killed_at_ns - (1.0 + LOSS_SLACK_S) * 1e9]
            if old and dump["counts"]["alloc"] < old[-1]:
                problems.append(f"run {i}: {dump['counts']['alloc']} allocs recorded, {old[-1]} made by then")
        ok = not problems and read == cut == kills
        details = (f"{read}/{kills} read, {cut}/{kills} cut, worst loss {worst_loss_s:.2f} s "
                   f"(limit {1.0 + LOSS_SLACK_S:.2f})")
        if problems:
            details += f"; {len(problems)} problems: " + "; ".join(problems[:3])
        return Row("SIGKILL sigkill_loop at random moments", f"{kills}", ok, details)

    def threads(self, threads: int, blocks: int) -> Row:
        exe = self.programs / "cross_free_threads"
        out_dir = self.out_dir("threads")
        run = finish(self.record([str(exe), str(threads), str(blocks)], out_dir))
        dats = sorted(out_dir.iterdir())
        name = f"{threads} threads, cross-thread free"
        if run.returncode != 0 or len(dats) != 1:
            return Row(name, "1", False, f"exit {run.returncode}, {len(dats)} dumps: {run.stderr.strip()[:200]}")
        dump = self.info(dats)[0]
        leaks = self.leaks_by_function(dump, exe)
        expected_leak = (threads, sum(100000 + i for i in range(threads)))
        problems = []
        if dump["clean_end"] is not True:
            problems.append("no clean end")
        if dump["heap"]["unmatched_frees"] != 0:
            problems.append(f"{dump['heap']['unmatched_frees']} unmatched frees")
        if dump["counts"]["alloc"] < threads * (blocks + 1):
            problems.append(f"{dump['counts']['alloc']} allocs < {threads * (blocks + 1)}")
        if len(dump["threads"]) != threads + 1:
            problems.append(f"{len(dump['threads'])} threads")
        if leaks.get("leak_per_thread") != expected_leak:
            problems.append(f"leak_per_thread {leaks.get('leak_per_thread')} != {expected_leak}")
        if "produce" in leaks:
            problems.append(f"false leaks from produce: {leaks['produce']}")
        if self.env.get("MEMREC_STAMP") == "tsc" and dump["counters"].get("stamp_tsc") != 1:
            problems.append(f"MEMREC_STAMP=tsc but the counter ordered the events: {run.stderr.strip()[:200]}")
        details = (f"{dump['counts']['alloc']:,} allocs, {dump['counts']['free']:,} frees, "
                   f"{dump['heap']['unmatched_frees']} unmatched frees, leaks {leaks.get('leak_per_thread')}, "
                   f"{dats[0].stat().st_size / 2**20:.1f} MiB dump")
        return Row(name, "1", not problems, details + ("; " + "; ".join(problems) if problems else ""))

    def forks(self, forks: int, mode: str) -> Row:
        exe = self.programs / "fork_storm"
        out_dir = self.out_dir(f"forks-{mode}")
        run = finish(self.record([str(exe), str(forks), mode], out_dir))
        dats = sorted(out_dir.iterdir())
        name = f"{forks} forks{' + exec' if mode == 'exec' else ''}, a thread allocating"
        if run.returncode != 0:
            return Row(name, "1", False, f"exit {run.returncode}: {run.stderr.strip()[:200]}")
        dumps = self.info(dats)
        parent = [d for d in dumps if d["header"]["pid"] == run.pid and d["header"]["cmdline"][1:] == [str(forks), mode]]
        problems = []
        if len(parent) != 1:
            problems.append(f"{len(parent)} parent dumps")
        elif self.leaks_by_function(parent[0], exe).get("parent_leak") != (1, 555):
            problems.append(f"parent leaks {self.leaks_by_function(parent[0], exe)}")
        if mode == "fork":
            children = [d for d in dumps if d["header"]["pid"] != run.pid]
            leak, expected = "child_leak", (1, 777)
        else:
            children = [d for d in dumps if d["header"]["cmdline"][1:] == ["child"]]
            leak, expected = "exec_leak", (1, 888)
        if len(children) != forks:
            problems.append(f"{len(children)} child dumps, expected {forks}")
        # A forked child's image that then execs is written out at the exec
        # without an End (the exec may fail and recording go on): not checked.
        finished = parent + children
        unclean = sum(d["clean_end"] is not True for d in finished)
        if unclean:
            problems.append(f"{unclean} dumps of finished processes without a clean end")
        wrong = [d for d in children if self.leaks_by_function(d, exe).get(leak) != expected]
        # Stack 0 is "no stack" (FORMAT.md, "Stack"): the leak is there, its stack is not.
        stackless = [d for d in wrong if any(not g["frames"] and g["bytes"] == expected[1] for g in d["leaks"])]
        if stackless:
            problems.append(f"{len(stackless)} children's {leak} recorded with stack 0 "
                            f"(pid {stackless[0]['header']['pid']})")
        if len(wrong) > len(stackless):
            other = next(d for d in wrong if d not in stackless)
            problems.append(f"{len(wrong) - len(stackless)} children without exactly {leak} {expected} "
                            f"(pid {other['header']['pid']})")
        orphans = [d["header"]["pid"] for d in children if d["header"]["ppid"] != run.pid]
        if orphans:
            problems.append(f"{len(orphans)} children whose ppid is not the parent")
        details = (f"{len(dumps)} dumps read, {len(finished) - unclean}/{len(finished)} finished ones clean, "
                   f"{len(children) - len(wrong)}/{forks} children exact")
        return Row(name, f"{len(dumps)} dumps", not problems, details + ("; " + "; ".join(problems) if problems else ""))


def sweep_commands(memrec: Path) -> list[list[str]]:
    """The subcommands that read dumps, as this memrec lists them in --help."""
    listed = finish(start([str(memrec), "--help"], clean_env({})), 60).stdout
    return [cmd for cmd in (["info"], ["info", "--json"], ["report"], ["report", "--json"])
            if f"  {cmd[0]} " in listed]


def as_row(scenario: str, fn, runs: str = "1") -> Row:
    """A stress_real scenario's (ok, details) as a Row."""
    ok, details = fn()
    return Row(scenario, runs, ok, details)


def guarded(scenario: str, fn, *args) -> Row:
    began = time.monotonic()
    try:
        row = fn(*args)
    except Exception as error:  # noqa: BLE001 - one broken scenario must not hide the others
        row = Row(scenario, "-", False, f"{type(error).__name__}: {error}")
    row.seconds = time.monotonic() - began
    print(f"stress: {row.scenario}: {'ok' if row.ok else 'FAILED'} ({row.seconds:.0f} s)", flush=True)
    return row


def servers(build: Path, scale: int) -> Row:
    """The service tests themselves, at `scale` times their sizes (they read
    MEMREC_SERVER_SCALE): the same assertions, on longer runs."""
    tests = Path(__file__).resolve().parents[1] / "integration"
    env = clean_env({"MEMREC_BUILD_DIR": str(build), "MEMREC_SERVER_SCALE": str(scale),
                     "MEMREC_TEST_TIMEOUT": str(TIMEOUT_S)})
    argv = ["/usr/bin/python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests / "test_postgres.py"),
            str(tests / "test_nginx.py")]
    run = finish(start(argv, env, cwd=tests), timeout=4 * TIMEOUT_S)
    summary = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else run.stderr.strip()[:200]
    return Row(f"servers x{scale}", "pytest", run.returncode == 0, summary)


def print_table(rows: list[Row]) -> None:
    headers = ("scenario", "runs", "result", "time", "details")
    cells = [(r.scenario, r.runs, "ok" if r.ok else "FAILED", f"{r.seconds:.0f} s", r.details) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers[:-1])]
    line = "  ".join(h.ljust(w) for h, w in zip(headers[:-1], widths)) + "  " + headers[-1]
    print("\n== stress summary ==")
    print(line)
    print("-" * len(line))
    for c in cells:
        print("  ".join(v.ljust(w) for v, w in zip(c[:-1], widths)) + "  " + c[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, required=True, help="meson build dir with the preload and memrec")
    parser.add_argument("--kills", type=int, default=30)
    parser.add_argument("--threads", type=int, default=64)
    parser.add_argument("--blocks", type=int, default=20000)
    parser.add_argument("--forks", type=int, default=200)
    parser.add_argument("--real-scale", type=int, default=5, help="real programs at N x the test sizes (0: skip)")
    parser.add_argument("--server-scale", type=int, default=5,
                        help="postgres and nginx at N x the test sizes (0: skip)")
    parser.add_argument("--fault-repeats", type=int, default=10, help="runs of each fault case (0: skip)")
    parser.add_argument("--seed", type=int, default=None, help="for the kill moments and fault sizes (default: random)")
    parser.add_argument("--corpus", type=Path, help="inputs to read with memrec (scripts/fuzz's corpus)")
    parser.add_argument("--fuzz", nargs=4, metavar=("EXIT", "SECONDS", "ELAPSED", "SUMMARY"),
                        help="the result of scripts/fuzz, for the table")
    parser.add_argument("--env", action="append", default=[], metavar="MEMREC_NAME=VALUE",
                        help="set for every run under the preload (MEMREC_STAMP=tsc); repeatable")
    args = parser.parse_args()
    env = {}
    for pair in args.env:
        name, sep, value = pair.partition("=")
        if not sep or not name.startswith("MEMREC_"):
            parser.error(f"--env {pair}: expected MEMREC_NAME=VALUE")
        env[name] = value
    seed = args.seed if args.seed is not None else random.randrange(1 << 32)
    print(f"stress: kill moments seeded with --seed {seed}")

    rows = []
    if args.fuzz:
        code, seconds, elapsed, summary = args.fuzz
        rows.append(Row(f"fuzz reader_fuzzer ({seconds} s)", summary.split(",")[0].removeprefix("fuzz: "),
                        code == "0", summary, float(elapsed)))
    with tempfile.TemporaryDirectory(prefix="memrec-stress-") as work:
        stress = Stress(args.build.resolve(), Path(work), env)
        if args.corpus:
            rows.append(guarded("analyzer over the fuzz corpus", stress.corpus, args.corpus))
        rows.append(guarded("SIGKILL sigkill_loop", stress.sigkill, args.kills, random.Random(seed)))
        rows.append(guarded(f"{args.threads} threads", stress.threads, args.threads, args.blocks))
        rows.append(guarded(f"{args.forks} forks", stress.forks, args.forks, "fork"))
        rows.append(guarded(f"{args.forks} forks + exec", stress.forks, args.forks, "exec"))
        if args.real_scale > 0:
            real = RealPrograms(stress, args.real_scale)
            for name in ("python", "perl", "sqlite", "git", "gxx", "pipeline", "redis"):
                rows.append(guarded(f"real: {name} x{args.real_scale}", as_row, f"real: {name} x{args.real_scale}",
                                    getattr(real, name)))
        if args.server_scale > 0:
            rows.append(guarded(f"servers x{args.server_scale}", servers, args.build.resolve(), args.server_scale))
        if args.fault_repeats > 0:
            faults = Faults(stress, args.fault_repeats, random.Random(seed))
            for name, fn in (("full disk", faults.full_disk), ("ulimit -f", faults.file_limit),
                             ("dump deleted", faults.deleted)):
                rows.append(guarded(f"fault: {name}", as_row, f"fault: {name}", fn, f"{args.fault_repeats}"))
    print_table(rows)
    failed = sum(not r.ok for r in rows)
    print(f"stress: {len(rows) - failed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
