"""The long versions of tests/integration/test_real_programs.py and
test_faults.py, for tests/stress/stress.py (stdlib only).

  real      python3, perl, sqlite3, git, g++, redis-server under
            redis-benchmark with SIGUSR1 toggles, and a shell pipeline, at
            --real-scale times the test sizes: the same stdout and exit code
            as without the preload, every dump read whole by `memrec report
            --json`, no event lost by the counters
  faults    fault_workload --fault-repeats times each against a full disk
            (a tmpfs of a random size), a random `ulimit -f`, and its dump
            deleted at a random moment: the same stdout and exit code, at
            most one `memrec:` line, and the dump reads (cut where it stopped)
"""
from __future__ import annotations

import json
import os
import random
import re
import resource
import shutil
import signal
import socket
import subprocess
import tempfile
import textwrap
import time
from pathlib import Path

LOSS_COUNTERS = ("missed_reentrant", "missed_no_buffer", "missed_stopped", "dropped_lossy")
# `memrec run`'s closing line (analyzer/run/run_command.cpp).
RUN_SUMMARY = re.compile(r"memrec: (?:\d+ dumps in .+; the main one: .+|1 dump: .+|no dump was written under .+)")


def run(argv, env, cwd=None, input=None, timeout=600, preexec_fn=None):
    """(returncode, stdout, stderr) of argv, its session killed past `timeout`."""
    proc = subprocess.Popen([str(a) for a in argv], env=env, cwd=cwd, stdin=subprocess.PIPE if input else
                            subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, preexec_fn=preexec_fn)
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise RuntimeError(f"{argv[0]} hung: killed after {timeout} s") from None
    return proc.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def clean_env(extra: dict[str, str]) -> dict[str, str]:
    """As stress.clean_env: without memrec's own variables, plus `extra`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREC_") and k != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    env.update(extra)
    return env


def memrec_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("memrec:")]


class RealPrograms:
    """One scenario per program; each returns (ok, details)."""

    def __init__(self, stress, scale: int):
        self.s = stress
        self.scale = scale

    def env(self, extra=None) -> dict[str, str]:
        return clean_env(extra or {})

    def preload_env(self, out_dir: Path, extra=None) -> dict[str, str]:
        return self.env({"LD_PRELOAD": str(self.s.preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat"),
                         **(extra or {})})

    def check_dumps(self, dats: list[Path]) -> tuple[list[str], list[dict]]:
        """Problems, and the finished processes of `memrec report --json`."""
        problems = []
        if not dats:
            return ["no dump"], []
        for dump in self.s.info(dats):
            lost = {k: dump["counters"][k] for k in LOSS_COUNTERS if dump["counters"][k]}
            if lost:
                problems.append(f"{Path(dump['file']).name} lost events {lost}")
        code, out, err = run([self.s.memrec, "report", "--json", "--top", "20", *dats], self.env())
        if code != 0:
            return problems + [f"report exited {code}: {err.strip()[:200]}"], []
        doc = json.loads(out)
        replaced = {p["parent"]["file"] for p in doc["processes"] if p["link"] == "exec" and p["parent"]}
        finished = []
        for p in doc["processes"]:
            rep = p["report"]
            if rep["dump"]["error"] is not None:
                problems.append(f"{rep['file']}: {rep['dump']['error']}")
            elif rep["file"] not in replaced:
                if not rep["dump"]["complete"]:
                    problems.append(f"{Path(rep['file']).name} not complete")
                finished.append(p)
        return problems, finished

    def same_as_plain(self, name: str, argv: list, cwd_rec: Path, cwd_plain: Path, input=None, env=None,
                      via_run=False) -> tuple[bool, str]:
        out_dir = self.s.out_dir(name)
        if via_run:
            full = [self.s.memrec, "run", "--output", out_dir / "%e.%p.dat", "--", *argv]
            rec = run(full, self.env(env), cwd=cwd_rec, input=input)
            rec_err = "\n".join(l for l in rec[2].splitlines() if not RUN_SUMMARY.fullmatch(l))
        else:
            rec = run(argv, self.preload_env(out_dir, env), cwd=cwd_rec, input=input)
            rec_err = rec[2]
        plain = run(argv, self.env(env), cwd=cwd_plain, input=input)
        problems = []
        if (rec[0], rec[1]) != (plain[0], plain[1]):
            problems.append(f"exit {rec[0]} vs {plain[0]}, stdout {len(rec[1])} vs {len(plain[1])} chars")
        if rec_err.strip() != plain[2].strip():
            problems.append(f"stderr differs: {rec_err.strip()[:200]!r}")
        dats = sorted(out_dir.iterdir())
        more, finished = self.check_dumps(dats)
        problems += more
        size = sum(p.stat().st_size for p in dats)
        allocs = sum(p["report"]["allocations"] for p in finished)
        shutil.rmtree(out_dir)
        details = f"{len(dats)} dumps, {allocs:,} allocations, {size / 2**20:.1f} MiB"
        return not problems, details + ("; " + "; ".join(problems[:3]) if problems else "")

    def dirs(self, name: str) -> tuple[Path, Path]:
        return (Path(tempfile.mkdtemp(prefix=f"{name}-rec-", dir=self.s.work)),
                Path(tempfile.mkdtemp(prefix=f"{name}-plain-", dir=self.s.work)))

    # --- the programs -------------------------------------------------------------

    def python(self):
        n = 30000 * self.scale
        code = textwrap.dedent(f"""
            import json, threading
            def work(seed):
                table = {{f"key-{{seed}}-{{i}}": [i] * (i % 7) + [str(i)] for i in range({n})}}
                return sum(len(sorted(v, key=str)) for v in table.values()) + len(table)
            results = [None] * 8
            threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, work(k))) for k in range(8)]
            for t in threads: t.start()
            for t in threads: t.join()
            print(json.dumps(results))
        """)
        a, b = self.dirs("python")
        # PYTHONMALLOC=malloc: every object through the hooks, not only those past pymalloc's 512 bytes.
        return self.same_as_plain("python", ["/usr/bin/python3", "-c", code], a, b, env={"PYTHONMALLOC": "malloc"})

    def perl(self):
        n = 40000 * self.scale
        script = textwrap.dedent(r"""
            my %words; my %by_len;
            for my $i (1 .. N) {
                my $w = join("", map { chr(97 + ($i * $_ * 7) % 26) } 1 .. 3 + $i % 9);
                $words{$w}++; push @{ $by_len{length $w} }, $w;
            }
            (my $text = join(" ", sort keys %words)) =~ s/\b(\w)(\w*)\b/\u$1$2/g;
            my %initials; $initials{$1}++ while $text =~ /\b([A-Z])/g;
            print scalar(keys %words), " ", scalar(keys %initials), " ", length $text, "\n";
        """).replace("N", str(n))
        a, b = self.dirs("perl")
        return self.same_as_plain("perl", ["/usr/bin/perl", "-e", script], a, b)

    def sqlite(self):
        n = 20000 * self.scale
        script = (f"CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);\n"
                  f"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < {n})\n"
                  f"  INSERT INTO t(name, v) SELECT 'gen-' || x || printf('%.*c', x % 50, 'y'), x * 0.5 FROM c;\n"
                  "CREATE INDEX t_name ON t(name);\nUPDATE t SET v = v * 2 WHERE id % 3 = 0;\n"
                  "SELECT id % 7, count(*), sum(v) FROM t GROUP BY id % 7 ORDER BY 1;\n"
                  "DELETE FROM t WHERE id % 2 = 0;\nSELECT count(*), min(name), max(name) FROM t;\n").encode()
        a, b = self.dirs("sqlite")
        return self.same_as_plain("sqlite", ["/usr/bin/sqlite3", "db"], a, b, input=script)

    def git(self):
        a, b = self.dirs("git")
        home = Path(tempfile.mkdtemp(prefix="git-home-", dir=self.s.work))
        when = "2026-01-02T03:04:05Z"
        env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home), "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "a@e",
               "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "a@e", "GIT_AUTHOR_DATE": when,
               "GIT_COMMITTER_DATE": when}
        for repo in (a, b):
            for i in range(300 * self.scale):
                path = repo / f"dir{i % 17}" / f"file{i}.txt"
                path.parent.mkdir(exist_ok=True)
                path.write_text("".join(f"file {i} line {n}\n" for n in range(i % 200)))
        script = ("git init -q -b main && git add -A && git commit -q -m first && "
                  "for f in dir3/*.txt; do echo changed >> $f; done && git commit -q -a -m second && "
                  "git log --stat --format='%H %s' && git gc -q && git count-objects -v | grep -v size")
        return self.same_as_plain("git", ["/bin/sh", "-c", script], a, b, env=env, via_run=True)

    def gxx(self):
        a, b = self.dirs("gxx")
        parts = ["#include <algorithm>\n#include <map>\n#include <regex>\n#include <sstream>\n#include <string>\n"
                 "#include <unordered_map>\n#include <vector>\n"]
        for k in range(2 * self.scale):
            parts.append(textwrap.dedent(f"""
                template <typename T> struct Box{k} {{ std::map<std::string, std::vector<T>> items; }};
                std::size_t use{k}(const std::string& text) {{
                  Box{k}<std::pair<int, std::string>> box;
                  std::istringstream in(text); std::string word;
                  while (in >> word) box.items[word].emplace_back({k}, word);
                  std::unordered_map<std::string, std::size_t> sizes;
                  for (auto& [key, v] : box.items) sizes[key] = v.size();
                  std::regex re("[a-z]+{k}");
                  return sizes.size() + std::regex_search(text, re);
                }}
            """))
        for d in (a, b):
            (d / "big.cpp").write_text("".join(parts))
        ok, details = self.same_as_plain("gxx", ["g++", "-O1", "-c", "big.cpp", "-o", "big.o"], a, b, via_run=True)
        if (a / "big.o").read_bytes() != (b / "big.o").read_bytes():
            ok, details = False, details + "; the object files differ"
        return ok, details

    def pipeline(self):
        a, b = self.dirs("pipeline")
        cmd = f"seq 1 {200000 * self.scale} | cut -c1-3 | sort | uniq -c | sort -n | tail -5"
        return self.same_as_plain("pipeline", ["/bin/sh", "-c", cmd], a, b, via_run=True)

    def redis(self):
        out_dir = self.s.out_dir("redis")
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", str(out_dir), "--daemonize", "no", "--logfile", ""]
        server = subprocess.Popen(argv, env=self.preload_env(out_dir), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
        cli = ["redis-cli", "-p", str(port)]
        try:
            deadline = time.monotonic() + 30
            while run([*cli, "ping"], self.env(), timeout=30)[1].strip() != "PONG":
                if time.monotonic() > deadline or server.poll() is not None:
                    return False, "redis-server did not start"
                time.sleep(0.1)
            n = 20000 * self.scale
            bench = subprocess.Popen(["redis-benchmark", "-q", "-n", str(n), "-p", str(port), "-t", "set,get,lpush"],
                                     env=self.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     start_new_session=True)
            toggles = 0
            while bench.poll() is None:
                time.sleep(0.3)
                if bench.poll() is None:
                    os.kill(server.pid, signal.SIGUSR1)
                    toggles += 1
            if toggles % 2:
                os.kill(server.pid, signal.SIGUSR1)
                toggles += 1
            sizes = (run([*cli, "dbsize"], self.env())[1], run([*cli, "llen", "mylist"], self.env())[1])
            run([*cli, "shutdown", "nosave"], self.env())
            code = server.wait(timeout=60)
            err = server.stderr.read().decode(errors="replace")
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait()
        problems = []
        if bench.returncode != 0 or code != 0 or memrec_lines(err):
            problems.append(f"benchmark exit {bench.returncode}, redis exit {code}, {memrec_lines(err)[:1]}")
        if sizes != ("2\n", f"{n}\n"):
            problems.append(f"dbsize, llen {sizes}")
        dats = sorted(out_dir.iterdir())
        dats = [d for d in dats if d.suffix == ".dat"]
        recorded = self.s.info(dats)[0]["counts"]["recording_toggles"] if dats else -1
        if recorded != toggles:
            problems.append(f"{recorded} toggles recorded, {toggles} sent")
        more, finished = self.check_dumps(dats)
        problems += more
        allocs = sum(p["report"]["allocations"] for p in finished)
        shutil.rmtree(out_dir)
        return not problems, (f"{n} requests x 3, {toggles} toggles recorded, {allocs:,} allocations"
                              + ("; " + "; ".join(problems[:3]) if problems else ""))


class Faults:
    """fault_workload against a full disk, a file-size limit, a deleted dump."""

    def __init__(self, stress, repeats: int, rng: random.Random):
        self.s = stress
        self.repeats = repeats
        self.rng = rng
        self.exe = stress.build / "tests" / "programs" / "fault_workload"
        self.n = "400000"

    def env(self, out: Path) -> dict[str, str]:
        return clean_env({"LD_PRELOAD": str(self.s.preload), "MEMREC_OUTPUT": str(out / "%e.%p.dat")})

    def plain(self, preexec_fn=None) -> tuple[int, str, str]:
        return run([self.exe, self.n], clean_env({}), preexec_fn=preexec_fn)

    def limit_ceiling_kib(self) -> int:
        """Nine tenths of the workload's dump when nothing stops it (its size
        varies a little with the writer's zstd level): a limit drawn above the
        dump stops nothing, and the dump got smaller as the format did, from
        over 2 MiB to 1.8 MiB."""
        if not hasattr(self, "_ceiling_kib"):
            out = self.s.out_dir("whole")
            run([self.exe, self.n], self.env(out))
            self._ceiling_kib = max(d.stat().st_size for d in out.iterdir()) * 9 // 10 >> 10
            shutil.rmtree(out)
        return self._ceiling_kib

    def judge(self, rec, plain, dats: list[Path], expect_line: bool) -> list[str]:
        problems = []
        if (rec[0], rec[1]) != (plain[0], plain[1]):
            problems.append(f"exit {rec[0]}, stdout {rec[1][:80]!r}")
        lines = memrec_lines(rec[2])
        if len(lines) != (1 if expect_line else 0):
            problems.append(f"{len(lines)} memrec lines: {lines[:2]}")
        for dat in dats:
            try:
                dump = self.s.info([dat])[0]
            except RuntimeError as error:
                problems.append(str(error))
                continue
            # Stopped by the fault: cut (no End); not stopped: complete.
            if dump["clean_end"] != (not expect_line):
                problems.append(f"clean_end {dump['clean_end']} with {len(lines)} memrec lines")
        return problems

    def full_disk(self) -> tuple[bool, str]:
        if os.geteuid() != 0:
            return True, "skipped: mounting a tmpfs takes root"
        plain = self.plain()
        problems, sizes = [], []
        for i in range(self.repeats):
            mount = Path(tempfile.mkdtemp(prefix="full-", dir=self.s.work))
            size = self.rng.randrange(16, self.limit_ceiling_kib()) << 10
            sizes.append(size >> 10)
            if run(["mount", "-t", "tmpfs", "-o", f"size={size}", "memrec-stress", mount], os.environ)[0] != 0:
                return False, "cannot mount a tmpfs"
            try:
                rec = run([self.exe, self.n], self.env(mount))
                problems += [f"{size >> 10} KiB: {p}" for p in self.judge(rec, plain, sorted(mount.iterdir()), True)]
            finally:
                run(["umount", mount], os.environ)
        return not problems, (f"{self.repeats} runs, tmpfs of {min(sizes)}..{max(sizes)} KiB"
                              + ("; " + "; ".join(problems[:3]) if problems else ""))

    def file_limit(self) -> tuple[bool, str]:
        problems, limits = [], []
        for i in range(self.repeats):
            limit = self.rng.randrange(1, self.limit_ceiling_kib()) << 10
            limits.append(limit >> 10)

            def set_limit(limit=limit):
                resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

            out = self.s.out_dir("fsize")
            rec = run([self.exe, self.n], self.env(out), preexec_fn=set_limit)
            plain = self.plain(preexec_fn=set_limit)
            dats = sorted(out.iterdir())
            problems += [f"{limit >> 10} KiB: {p}" for p in self.judge(rec, plain, dats, True)]
            if any(d.stat().st_size != limit for d in dats):
                problems.append(f"{limit >> 10} KiB: dump of {[d.stat().st_size for d in dats]} bytes")
            shutil.rmtree(out)
        return not problems, (f"{self.repeats} runs, limits {min(limits)}..{max(limits)} KiB, SIGXFSZ at default"
                              + ("; " + "; ".join(problems[:3]) if problems else ""))

    def deleted(self) -> tuple[bool, str]:
        n = "2000000"  # long enough that most deletions land while it runs
        plain = run([self.exe, n], clean_env({}))
        problems = []
        stopped = 0
        for i in range(self.repeats):
            out = self.s.out_dir("deleted")
            proc = subprocess.Popen([self.exe, n], env=self.env(out), stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, start_new_session=True)
            kept = None
            try:
                time.sleep(self.rng.uniform(0.01, 2.0))
                dats = sorted(out.iterdir())
                if dats:
                    kept = os.open(dats[0], os.O_RDONLY)
                    dats[0].unlink()
                out_b, err_b = proc.communicate(timeout=600)
                rec = (proc.returncode, out_b.decode(), err_b.decode())
                saved = []
                if kept is not None:
                    saved = [out / "saved.dat"]
                    saved[0].write_bytes(os.pread(kept, os.fstat(kept).st_size, 0))
                said = len(memrec_lines(rec[2])) == 1
                stopped += said
                problems += [f"run {i}: {p}" for p in self.judge(rec, plain, saved, said)]
                if sorted(p.name for p in out.iterdir()) != ["saved.dat"] * len(saved):
                    problems.append(f"run {i}: a dump came back")
            finally:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                if kept is not None:
                    os.close(kept)
                shutil.rmtree(out)
        return not problems, (f"{self.repeats} runs, {stopped} stopped by the deletion, "
                              f"{self.repeats - stopped} had finished before it"
                              + ("; " + "; ".join(problems[:3]) if problems else ""))
