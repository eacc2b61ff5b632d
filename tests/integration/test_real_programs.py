"""Programs nobody here wrote must behave the same under the preload: same
output, same exit code, and dumps that `memrec report --json` reads whole,
with no event lost and the program's own functions among the call sites.
Each is sized to take a few seconds."""
from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import socket
import textwrap
import time
from collections import Counter
from pathlib import Path

import pytest

import memrec_support as support
from memrec_support import memrec_lines, short_name

PYTHON = "/usr/bin/python3"
SQLITE = "/usr/bin/sqlite3"
PERL = "/usr/bin/perl"
GIT = "/usr/bin/git"
CXX = "/usr/bin/g++"

# Counters that would mean an event never reached the dump (FORMAT.md, "Counters").
LOSS_COUNTERS = ("missed_reentrant", "missed_no_buffer", "missed_stopped", "dropped_lossy")


def need(*tools: str) -> None:
    """Skips when a tool is missing; scripts/setup installs them all, so CI never skips."""
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: run scripts/setup")


def functions_in_sites(rep: dict) -> set[str]:
    """Every named frame of every site the report lists, as short_name()s."""
    return {short_name(frame["function"]) for frame in rep["frames"] if frame["function"]}


def replaced_by_exec(doc: dict) -> set[str]:
    """Files of images that exec() replaced: a fork child's image is written
    out at the exec without an End (the exec may fail and recording go on)."""
    by_file = {p["report"]["file"]: p for p in doc["processes"]}
    return {p["parent"]["file"] for p in doc["processes"]
            if p["link"] == "exec" and p["parent"] and p["parent"]["file"] in by_file}


def assert_recorded_whole(build, dats: list[Path], info) -> list[dict]:
    """Every dump: no event lost by the counters, and a report that reads it
    whole (an image replaced by exec: reads without error). Returns the
    reports of the processes that ran to their end, as report --json orders them."""
    assert dats, "no dump written"
    infos = info(*dats)
    for dump in infos if isinstance(infos, list) else [infos]:
        lost = {name: dump["counters"][name] for name in LOSS_COUNTERS if dump["counters"][name]}
        assert lost == {}, f"{dump['file']}: events lost: {lost}"
    doc = support.report(build, *dats)
    assert len(doc["processes"]) == len(dats)
    replaced = replaced_by_exec(doc)
    finished = []
    for process in doc["processes"]:
        rep = process["report"]
        assert rep["dump"]["error"] is None, rep["dump"]
        if rep["file"] in replaced:
            continue
        assert rep["dump"]["complete"] is True, (process["exe"], rep["dump"])
        assert rep["allocations"] > 0, process["exe"]
        finished.append(process)
    return finished


def assert_same_run(run, plain) -> None:
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    assert memrec_lines(run.stderr) == []
    assert run.stderr == plain.stderr


def assert_summary_counts(run, dats: list[Path]) -> None:
    """`memrec run`'s closing line counts every dump, and names one of them."""
    count, main = support.run_summary(run.stderr)
    assert count == len(dats) and main in dats, (run.stderr, dats)


def memrec_run(build, out_dir: Path, argv: list[str], cwd: Path, env=None) -> support.Run:
    """`memrec run --output out_dir/%e.%p.dat -- argv` in `cwd`."""
    full = [str(build.memrec), "run", "--output", str(out_dir / "%e.%p.dat"), "--", *map(str, argv)]
    return support.finish(support.start(full, support.clean_env(env), cwd=cwd), full, support.TIMEOUT_S)


# ---- python3 -------------------------------------------------------------------

PYTHON_WORKLOAD = textwrap.dedent("""
    import json, sys, threading
    def work(seed):
        table = {}
        for i in range(30000):
            table[f"key-{seed}-{i}"] = [i] * (i % 7) + [str(i)]
        lists = [sorted(v, key=str) for v in table.values() if len(v) > 3]
        return sum(len(v) for v in lists) + len(table)
    results = [None] * 4
    def run(k):
        results[k] = work(k)
    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    print(json.dumps({"results": results, "total": sum(results)}, sort_keys=True))
    sys.exit(7)
""")


def test_python_with_threads_runs_unchanged(build, record, run_plain, info):
    # given CPython building dicts and lists in 4 threads, exiting 7
    args = ("-I", "-c", PYTHON_WORKLOAD)
    # when it runs with and without the preload
    run = record(PYTHON, *args)
    plain = run_plain(PYTHON, *args)
    # then output and exit code are the same
    assert plain.returncode == 7 and plain.stdout.startswith('{"results": [')
    assert_same_run(run, plain)
    # and the dump is whole, with every thread and the interpreter's loop in its sites
    assert len(run.dats) == 1, run.describe()
    (process,) = assert_recorded_whole(build, run.dats, info)
    assert process["report"]["threads"] >= 5
    assert process["report"]["allocations"] > 1000
    assert "_PyEval_EvalFrameDefault" in functions_in_sites(process["report"])


# ---- sqlite3 -------------------------------------------------------------------

def sqlite_script() -> bytes:
    lines = ["CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);", "BEGIN;"]
    lines += [f"INSERT INTO t(name, v) VALUES ('name-{i}-{'x' * (i % 40)}', {i * 0.25});" for i in range(3000)]
    lines += [
        "COMMIT;",
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000)",
        "  INSERT INTO t(name, v) SELECT 'gen-' || x, x * 0.5 FROM c;",
        "CREATE INDEX t_name ON t(name);",
        "SELECT count(*), sum(v) FROM t;",
        "UPDATE t SET v = v * 2 WHERE id % 3 = 0;",
        "SELECT id % 7, count(*), sum(v) FROM t GROUP BY id % 7 ORDER BY 1;",
        "DELETE FROM t WHERE id % 2 = 0;",
        "SELECT count(*), min(name), max(name) FROM t;",
        "SELECT group_concat(name, ',') FROM (SELECT name FROM t ORDER BY name LIMIT 40);",
        "SELECT * FROM no_such_table;",  # an error: exit code 1
        "SELECT 'still running';",
    ]
    return ("\n".join(lines) + "\n").encode()


def test_sqlite3_shell_runs_unchanged(build, record, run_plain, info, tmp_path):
    # given the sqlite3 shell building a database file from a generated script
    # that ends with an error (so it exits 1)
    script = sqlite_script()
    # when it runs with and without the preload, each on a database of its own
    run = record(SQLITE, tmp_path / "recorded.db", input=script)
    plain = run_plain(SQLITE, tmp_path / "plain.db", input=script)
    # then output and exit code are the same, and so are the databases' contents
    assert plain.returncode == 1 and "still running" in plain.stdout
    assert_same_run(run, plain)
    dumps = [run_plain(SQLITE, tmp_path / db, ".dump").stdout for db in ("recorded.db", "plain.db")]
    assert dumps[0] == dumps[1] and "CREATE INDEX t_name" in dumps[0]
    # and the dump is whole, with SQLite's allocator among its sites
    assert len(run.dats) == 1, run.describe()
    (process,) = assert_recorded_whole(build, run.dats, info)
    assert process["report"]["allocations"] > 1000
    assert "sqlite3Malloc" in functions_in_sites(process["report"])


# ---- perl ----------------------------------------------------------------------

PERL_SCRIPT = textwrap.dedent(r"""
    use strict; use warnings;
    my %words; my %by_len;
    for my $i (1 .. 40000) {
        my $w = join("", map { chr(97 + ($i * $_ * 7) % 26) } 1 .. 3 + $i % 9);
        $words{$w}++;
        push @{ $by_len{length $w} }, $w;
    }
    my $vowels = grep { /^[^aeiou]*[aeiou][^aeiou]*$/ } keys %words;
    (my $text = join(" ", sort keys %words)) =~ s/\b(\w)(\w*)\b/\u$1$2/g;
    my %initials; $initials{$1}++ while $text =~ /\b([A-Z])/g;
    printf "%d words, %d with one vowel, %d lengths, %d initials, %d chars\n",
        scalar(keys %words), $vowels, scalar(keys %by_len), scalar(keys %initials), length $text;
    exit 3;
""")


def test_perl_with_hashes_and_regexes_runs_unchanged(build, record, run_plain, info, tmp_path):
    # given perl filling hashes of arrays and rewriting a long string with regexes, exiting 3
    need(PERL)
    script = tmp_path / "words.pl"
    script.write_text(PERL_SCRIPT)
    # when it runs with and without the preload
    run = record(PERL, script)
    plain = run_plain(PERL, script)
    # then output and exit code are the same
    assert plain.returncode == 3 and " words, " in plain.stdout
    assert_same_run(run, plain)
    # and the dump is whole, with perl's own allocator and hash code in its sites
    assert len(run.dats) == 1, run.describe()
    (process,) = assert_recorded_whole(build, run.dats, info)
    assert process["report"]["allocations"] > 10000
    assert {"Perl_safesysmalloc", "Perl_hv_common"} <= functions_in_sites(process["report"])


# ---- git -----------------------------------------------------------------------

def git_env(home: Path) -> dict[str, str]:
    when = "2026-01-02T03:04:05Z"  # fixed dates: the same commits, the same hashes
    return {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home), "GIT_AUTHOR_NAME": "Ada Tester",
            "GIT_AUTHOR_EMAIL": "ada@example.org", "GIT_COMMITTER_NAME": "Ada Tester",
            "GIT_COMMITTER_EMAIL": "ada@example.org", "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}


def fill_tree(repo: Path, generation: int) -> None:
    """60 text files in 5 folders; each generation changes every 6th file."""
    for i in range(60):
        path = repo / f"dir{i % 5}" / f"file{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"file {i} line {n} {'word ' * (n % 9)}" for n in range(20 * (i + 1))]
        if generation and i % 6 == 0:
            lines += [f"generation {generation} of file {i}"]
        path.write_text("\n".join(lines) + "\n")


GIT_STEPS = [
    ("init", "-q", "-b", "main"),
    ("add", "-A"),
    ("commit", "-q", "-m", "first: 60 files"),
    ("commit", "-q", "-a", "-m", "second: every 6th file"),
    ("log", "--stat", "--format=%H %an <%ae> %s"),
    ("rev-list", "--count", "HEAD"),
    ("grep", "-c", "generation 1"),
]


def test_git_init_add_commit_log_run_unchanged(build, record, run_plain, info, tmp_path):
    # given two identical generated trees, git's configuration from nowhere
    # but the environment, and fixed commit dates
    need(GIT)
    home = tmp_path / "home"
    home.mkdir()
    repos = {"recorded": tmp_path / "recorded", "plain": tmp_path / "plain"}
    results: dict[str, list] = {"recorded": [], "plain": []}
    for step in GIT_STEPS:
        for name, repo in repos.items():
            repo.mkdir(exist_ok=True)
            if step[0] == "add":
                fill_tree(repo, 0)
            if step[:2] == ("commit", "-q") and "-a" in step:
                fill_tree(repo, 1)
            # when each git command runs with the preload in one and without in the other
            if name == "recorded":
                results[name].append(record(GIT, *step, cwd=repo, env=git_env(home)))
            else:
                results[name].append(run_plain(GIT, *step, cwd=repo, env=git_env(home)))
    # then every command printed the same and exited the same
    for run, plain in zip(results["recorded"], results["plain"]):
        assert_same_run(run, plain)
        assert run.returncode == 0, run.describe()
    log = results["plain"][4].stdout
    assert log.count("Ada Tester <ada@example.org>") == 2 and "60 files changed" in log
    assert results["plain"][5].stdout == "2\n"
    # and every dump of every git process is whole, zlib's deflate (writing
    # objects) among the sites
    dats = [dat for run in results["recorded"] for dat in run.dats]
    finished = assert_recorded_whole(build, dats, info)
    assert len(finished) >= len(GIT_STEPS)
    assert "deflateInit2_" in set().union(*(functions_in_sites(p["report"]) for p in finished))


# ---- the C++ compiler ----------------------------------------------------------

CXX_SOURCE = textwrap.dedent("""
    // A word index: the STL containers and algorithms a C++ compiler spends its memory on.
    #include <algorithm>
    #include <map>
    #include <memory>
    #include <string>
    #include <unordered_map>
    #include <vector>

    namespace index {
    struct Posting { std::size_t line; std::size_t column; };

    template <typename Key, typename Fn>
    std::map<Key, std::vector<Posting>> group(const std::vector<std::pair<Key, Posting>>& items, Fn&& key_of) {
      std::map<Key, std::vector<Posting>> out;
      for (const auto& [key, posting] : items) out[key_of(key)].push_back(posting);
      return out;
    }

    class Index {
     public:
      void add(const std::string& text) {
        std::size_t line = 0, column = 0, start = 0;
        for (std::size_t i = 0; i <= text.size(); ++i) {
          if (i < text.size() && text[i] != ' ' && text[i] != '\\n') continue;
          if (i > start) {
            items_.emplace_back(text.substr(start, i - start), Posting{line, column++});
            counts_[items_.back().first] += 1;
          }
          if (i < text.size() && text[i] == '\\n') line += 1, column = 0;
          start = i + 1;
        }
      }
      std::vector<std::string> top(std::size_t n) const {
        std::vector<std::pair<std::string, int>> all(counts_.begin(), counts_.end());
        std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
        std::vector<std::string> out;
        std::transform(all.begin(), all.begin() + std::min(n, all.size()), std::back_inserter(out),
                       [](const auto& p) { return p.first; });
        return out;
      }
      std::map<std::string, std::vector<Posting>> by_initial() const {
        return group(items_, [](const std::string& w) { return w.substr(0, 1); });
      }
     private:
      std::vector<std::pair<std::string, Posting>> items_;
      std::unordered_map<std::string, int> counts_;
    };
    }  // namespace index

    std::size_t summarize(const std::string& text) {
      auto idx = std::make_unique<index::Index>();
      idx->add(text);
      std::size_t total = idx->top(5).size();
      for (const auto& [initial, postings] : idx->by_initial()) total += postings.size();
      return total;
    }
""")


def test_gxx_compiling_an_stl_source_writes_a_whole_dump_per_process(build, memrec_cli, run_plain, info, tmp_path):
    # given an STL-heavy C++ source, in two folders so both compiles see the same relative names
    need(CXX)
    recorded, plain_dir, out_dir = (support.fresh_dir(tmp_path, n) for n in ("recorded", "plain", "dumps"))
    for folder in (recorded, plain_dir):
        (folder / "word_index.cpp").write_text(CXX_SOURCE)
    argv = [CXX, "-std=c++17", "-O0", "-c", "word_index.cpp", "-o", "word_index.o"]
    # when `memrec run` runs g++ -O0 -c on it, and g++ runs once without the preload
    run = memrec_run(build, out_dir, argv, cwd=recorded)
    plain = run_plain(argv[0], *argv[1:], cwd=plain_dir)
    # then both succeed and the object files are byte for byte the same
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (0, ""), run.describe()
    assert support.without_run_summary(run.stderr) == []
    assert (recorded / "word_index.o").read_bytes() == (plain_dir / "word_index.o").read_bytes()
    # and every process of the tree (the driver, cc1plus, as) wrote a dump that
    # memrec run listed, which reads whole
    dats = sorted(out_dir.iterdir())
    assert_summary_counts(run, dats)
    finished = assert_recorded_whole(build, dats, info)
    names = sorted(Path(p["exe"]).name for p in finished)
    assert "cc1plus" in names, names
    assert any(n == "as" or n.endswith("-as") for n in names), names
    assert any("g++" in n for n in names), names
    # and cc1plus's sites run through the compiler's main and its parser
    (cc1plus,) = [p for p in finished if Path(p["exe"]).name == "cc1plus"]
    assert cc1plus["report"]["allocations"] > 10000
    assert {"toplev::main", "c_parse_file"} <= functions_in_sites(cc1plus["report"])


# ---- a shell pipeline ----------------------------------------------------------

PIPELINE = "seq 1 40000 | cut -c1-2 | sort | uniq -c | sort -n | tail -5"


def test_shell_pipeline_writes_a_dump_per_process_and_prints_the_same(build, memrec_cli, run_plain, info,
                                                                      tmp_path):
    # given a pipeline of six programs run by sh
    out_dir = support.fresh_dir(tmp_path, "dumps")
    # when `memrec run` runs it, and sh runs it once without the preload
    run = memrec_run(build, out_dir, ["/bin/sh", "-c", PIPELINE], cwd=tmp_path)
    plain = run_plain("/bin/sh", "-c", PIPELINE)
    # then the output is the same
    assert plain.returncode == 0 and len(plain.stdout.splitlines()) == 5
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout), run.describe()
    # and every process wrote a dump, listed by memrec run, that reads whole:
    # the shell and each program of the pipeline exactly once
    dats = sorted(out_dir.iterdir())
    assert_summary_counts(run, dats)
    finished = assert_recorded_whole(build, dats, info)
    shell = os.path.basename(os.path.realpath("/bin/sh"))
    assert Counter(Path(p["exe"]).name for p in finished) == Counter(
        {shell: 1, "seq": 1, "cut": 1, "sort": 2, "uniq": 1, "tail": 1})
    assert sorted(p["cmdline"] for p in finished if Path(p["exe"]).name == "sort") == [["sort"], ["sort", "-n"]]


# ---- redis-server under redis-benchmark ----------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def redis_cli(port: int, *args: str) -> support.Run:
    argv = ["redis-cli", "-p", str(port), *args]
    return support.finish(support.start(argv, support.clean_env()), argv, support.TIMEOUT_S)


def sigusr1_pending(pid: int) -> bool:
    """Whether a SIGUSR1 sent to the process waits for a thread to take it
    (ShdPnd in /proc/PID/status, proc(5))."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("ShdPnd:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGUSR1 - 1)))
    raise AssertionError(f"no ShdPnd in /proc/{pid}/status")


@dataclasses.dataclass
class RedisRun:
    bench: support.Run
    sizes: tuple[str, str]  # redis-cli's dbsize and llen mylist, after the benchmark
    server: support.Run
    toggles_sent_ns: list[int]  # CLOCK_MONOTONIC, just before each SIGUSR1


def run_redis_benchmark(tmp_path: Path, env: dict[str, str], toggle: bool) -> RedisRun:
    """redis-server without persistence, on a free port, loaded by
    redis-benchmark with 20000 SET, GET and LPUSH each; with `toggle`, SIGUSR1
    every 50 ms while the benchmark runs. Then dbsize, llen and a shutdown."""
    port = free_port()
    argv = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", str(tmp_path), "--daemonize", "no", "--logfile", ""]
    server = support.start(argv, env, cwd=tmp_path)
    sent: list[int] = []
    try:
        deadline = time.monotonic() + 20
        while redis_cli(port, "ping").stdout.strip() != "PONG":
            assert server.poll() is None and time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.1)
        bench_argv = ["redis-benchmark", "-q", "-n", "20000", "-p", str(port), "-t", "set,get,lpush"]
        bench = support.start(bench_argv, support.clean_env())
        while toggle:
            time.sleep(0.05)
            if bench.poll() is not None:
                break
            sent.append(time.monotonic_ns())
            os.kill(server.pid, signal.SIGUSR1)
            # A second SIGUSR1 sent while the first still waits would merge
            # with it (signal(7): standard signals do not queue): wait for it
            # to be taken.
            deadline = time.monotonic() + support.TIMEOUT_S
            while sigusr1_pending(server.pid):
                assert time.monotonic() < deadline, "redis-server did not take SIGUSR1"
                time.sleep(0.001)
        bench_run = support.finish(bench, bench_argv, support.TIMEOUT_S)
        # (without -r every SET hits the one key "key:__rand_int__", every LPUSH "mylist")
        sizes = (redis_cli(port, "dbsize").stdout, redis_cli(port, "llen", "mylist").stdout)
        redis_cli(port, "shutdown", "nosave")
        server_run = support.finish(server, argv, support.TIMEOUT_S)
    finally:
        support.kill_tree(server)
    return RedisRun(bench_run, sizes, server_run, sent)


def benchmark_tests(bench: support.Run) -> list[str]:
    """The tests redis-benchmark -q says it ran, in order."""
    return [line.split(":")[0].split()[-1] for line in bench.stdout.split("\n") if "requests per second" in line]


def test_redis_under_benchmark_keeps_every_write_as_without_the_preload_and_records_each_sigusr1_toggle(build, preload, info, tmp_path):
    # given redis-server without persistence, on a free port, under the preload
    need("redis-server", "redis-benchmark", "redis-cli")
    out_dir = support.fresh_dir(tmp_path, "dumps")
    env = support.clean_env({"LD_PRELOAD": str(preload), "MEMREC_OUTPUT": str(out_dir / "%e.%p.dat")})
    # when redis-benchmark loads it with SET, GET and LPUSH, and SIGUSR1
    # turns the recording off and on every 50 ms while the benchmark runs
    run = run_redis_benchmark(support.fresh_dir(tmp_path, "recorded"), env, toggle=True)
    # (each one sent while the benchmark still ran: at least four of them)
    assert len(run.toggles_sent_ns) >= 4, "redis-benchmark ended too soon: give it more requests"
    # then the benchmark ran every test against a server that kept every
    # write, and redis exited normally: all as without the preload
    plain = run_redis_benchmark(support.fresh_dir(tmp_path, "plain"), support.clean_env(), toggle=False)
    assert plain.bench.returncode == 0, plain.bench.describe()
    assert run.bench.returncode == 0, run.bench.describe()
    assert benchmark_tests(run.bench) == benchmark_tests(plain.bench) == ["SET", "GET", "LPUSH"], run.bench.stdout
    assert run.sizes == plain.sizes == ("2\n", "20000\n")
    assert run.server.returncode == plain.server.returncode == 0, run.server.describe()
    assert "ready to exit" in run.server.stdout and "ready to exit" in plain.server.stdout
    assert memrec_lines(run.server.stderr + run.server.stdout) == []
    assert run.server.stderr == plain.server.stderr == ""
    # and its one dump holds every toggle, off first, each after it was sent
    dats = sorted(out_dir.iterdir())
    assert len(dats) == 1, dats
    dump = info(dats[0])
    sent = run.toggles_sent_ns
    assert [t["on"] for t in dump["recording"]] == [i % 2 == 1 for i in range(len(sent))]
    times = [t["time_ns"] for t in dump["recording"]]
    assert times == sorted(times)
    assert all(at >= sent_at for at, sent_at in zip(times, sent)), (times, sent)
    assert dump["counts"]["recording_toggles"] == len(sent)
    # and it reads whole, with redis's own functions among the call sites
    (process,) = assert_recorded_whole(build, dats, info)
    assert process["report"]["allocations"] > 1000
    assert {"zmalloc", "readQueryFromClient"} <= functions_in_sites(process["report"])
