"""Helpers for the integration tests: run a program under libmemrec.so, read
its dumps with `memrec info --json`, and name stack frames with addr2line.

Every process started here has a timeout and runs in its own session, so a
hang kills the whole process tree and fails the test instead of the suite.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Iterable, Mapping, Sequence

import pytest

# Seconds any one process may take; MEMREC_TEST_TIMEOUT overrides (slow machines, valgrind).
TIMEOUT_S = float(os.environ.get("MEMREC_TEST_TIMEOUT", "60"))

REPO = Path(__file__).resolve().parents[2]


@dataclasses.dataclass(frozen=True)
class Build:
    """Paths inside a meson build directory."""

    root: Path

    @property
    def preload(self) -> Path:
        return self.root / "preload" / "libmemrec.so"

    @property
    def memrec(self) -> Path:
        return self.root / "analyzer" / "memrec"

    @property
    def programs_dir(self) -> Path:
        return self.root / "tests" / "programs"

    def program(self, name: str) -> Path:
        path = self.programs_dir / name
        if not path.exists():
            pytest.fail(f"{path} is missing: build the tests/programs targets (ninja -C {self.root})")
        return path

    def is_test_module(self, module: str | None) -> bool:
        """True for our test programs and libraries (not libc, libstdc++, ...)."""
        if not module:
            return False
        return Path(os.path.realpath(module)).parent == Path(os.path.realpath(self.programs_dir))


def build_from_env() -> Build:
    root = os.environ.get("MEMREC_BUILD_DIR") or str(REPO / "build")
    return Build(Path(root).resolve())


@dataclasses.dataclass
class Run:
    """A finished process: what it printed, how it ended, which dumps it left."""

    argv: list[str]
    pid: int
    returncode: int
    stdout: str
    stderr: str
    out_dir: Path | None = None
    dats: list[Path] = dataclasses.field(default_factory=list)

    def describe(self) -> str:
        return (f"{' '.join(self.argv)} (pid {self.pid}) exited {self.returncode}\n"
                f"--- stdout\n{self.stdout}--- stderr\n{self.stderr}--- dumps: {self.dats}")


def clean_env(extra: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """The test runner's environment without memrec's own variables, plus
    `extra` (a None value removes the variable)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMREC_") and k != "LD_PRELOAD"}
    env["LC_ALL"] = "C"
    for key, value in (extra or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def kill_tree(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def start(argv: Sequence[str], env: Mapping[str, str], cwd: Path | None = None,
          stdin=subprocess.DEVNULL, preexec_fn=None) -> subprocess.Popen:
    """Starts `argv` in a session of its own (so kill_tree reaches its children).
    `preexec_fn` runs in the child before exec (e.g. to ignore a signal)."""
    return subprocess.Popen([str(a) for a in argv], env=dict(env), cwd=cwd, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                            preexec_fn=preexec_fn)


def finish(proc: subprocess.Popen, argv: Sequence[str], timeout: float, input: bytes | None = None) -> Run:
    """Waits for `proc` at most `timeout` seconds; past that kills its tree and fails."""
    try:
        out, err = proc.communicate(input=input, timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        out, err = proc.communicate()
        pytest.fail(f"timed out after {timeout} s: {' '.join(map(str, argv))}\n"
                    f"--- stdout\n{out.decode(errors='replace')}--- stderr\n{err.decode(errors='replace')}")
    kill_tree(proc)  # children that outlived it
    return Run([str(a) for a in argv], proc.pid, proc.returncode,
               out.decode(errors="replace"), err.decode(errors="replace"))


def resolve_program(build: Build, program: str | os.PathLike) -> Path:
    """A bare name is a test program in the build; a path is used as given."""
    text = str(program)
    return Path(text) if os.sep in text else build.program(text)


def fresh_dir(parent: Path, stem: str) -> Path:
    for n in range(1000):
        path = parent / (stem if n == 0 else f"{stem}-{n}")
        if not path.exists():
            path.mkdir(parents=True)
            return path
    raise RuntimeError(f"no free directory name {stem} in {parent}")


def record(build: Build, program: str | os.PathLike, args: Iterable[str] = (), *, tmp_path: Path,
           env: Mapping[str, str | None] | None = None, output: str | None = "%e.%p.dat",
           timeout: float = TIMEOUT_S, cwd: Path | None = None, input: bytes | None = None,
           preexec_fn=None) -> Run:
    """Runs `program args` with LD_PRELOAD=libmemrec.so and MEMREC_OUTPUT set to
    `output` inside a fresh directory of its own (output=None leaves
    MEMREC_OUTPUT unset; an absolute `output` is used as is). Returns the Run,
    whose `dats` are every file that appeared in that directory."""
    if not build.preload.exists():
        pytest.fail(f"{build.preload} is missing: build the preload (ninja -C {build.root})")
    out_dir = fresh_dir(tmp_path, "memrec-out")
    extra: dict[str, str | None] = {"LD_PRELOAD": str(build.preload)}
    if output is not None:
        extra["MEMREC_OUTPUT"] = output if os.path.isabs(output) else str(out_dir / output)
    extra.update(env or {})
    argv = [str(resolve_program(build, program)), *map(str, args)]
    proc = start(argv, clean_env(extra), cwd=cwd or out_dir,
                 stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, preexec_fn=preexec_fn)
    run = finish(proc, argv, timeout, input)
    run.out_dir = out_dir
    run.dats = sorted(p for p in out_dir.iterdir() if p.is_file())
    return run


def run_plain(build: Build, program: str | os.PathLike, args: Iterable[str] = (), *,
              env: Mapping[str, str | None] | None = None, timeout: float = TIMEOUT_S,
              cwd: Path | None = None, input: bytes | None = None, preexec_fn=None) -> Run:
    """Runs the program without the preload, for comparison."""
    argv = [str(resolve_program(build, program)), *map(str, args)]
    proc = start(argv, clean_env(env), cwd=cwd,
                 stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, preexec_fn=preexec_fn)
    return finish(proc, argv, timeout, input)


def memrec_info_raw(build: Build, dats: Sequence[Path], timeout: float = TIMEOUT_S) -> Run:
    if not build.memrec.exists():
        pytest.fail(f"{build.memrec} is missing: build the analyzer (ninja -C {build.root})")
    argv = [str(build.memrec), "info", "--json", *map(str, dats)]
    return finish(start(argv, clean_env()), argv, timeout)


def info(build: Build, *dats: Path) -> dict | list[dict]:
    """`memrec info --json` of one dump (a dict) or several (a list)."""
    run = memrec_info_raw(build, dats)
    assert run.returncode == 0, f"memrec info failed:\n{run.describe()}"
    try:
        return json.loads(run.stdout)
    except json.JSONDecodeError as error:
        pytest.fail(f"memrec info printed invalid JSON ({error}):\n{run.stdout[:2000]}")


def short_name(demangled: str) -> str:
    """`(anonymous namespace)::leak_widgets()` -> `leak_widgets`: tests name
    functions as written in the source, without parameters or the anonymous
    namespace (`operator new(unsigned long)` -> `operator new`)."""
    name = demangled.replace("(anonymous namespace)::", "")
    if name.endswith(")"):
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    return name.strip()


@functools.lru_cache(maxsize=None)
def function_at(module: str, offset: int) -> str | None:
    """The function containing the return address `offset` of `module`: the
    symbolizer's job, done here with binutils' addr2line on offset - 1 (the call
    instruction), shortened by short_name(). None if addr2line does not know."""
    out = subprocess.run(["addr2line", "-f", "-C", "-e", module, hex(offset - 1)],
                         capture_output=True, text=True, timeout=TIMEOUT_S, check=False).stdout
    name = out.splitlines()[0].strip() if out else ""
    return None if name in ("", "??") else short_name(name)


def function_of(frame: Mapping) -> str | None:
    if not frame.get("module") or frame.get("offset") is None:
        return None
    return function_at(frame["module"], int(frame["offset"]))


def innermost_test_function(build: Build, leak: Mapping) -> str | None:
    """The function of the first frame (innermost first) in one of our test
    programs or libraries; frames in libc, libstdc++ (operator new) are skipped."""
    for frame in leak["frames"]:
        if build.is_test_module(frame.get("module")):
            return function_of(frame) or f"?{frame['module']}+{frame['offset']:#x}"
    return None


def leaks_by_function(build: Build, dump: Mapping) -> dict[str, tuple[int, int]]:
    """{function: (count, bytes)} of the leaks, by innermost test-program frame.
    Leaks with no frame in a test program (libc's, libstdc++'s own) are left out."""
    result: dict[str, tuple[int, int]] = {}
    for leak in dump["leaks"]:
        name = innermost_test_function(build, leak)
        if name is None:
            continue
        count, size = result.get(name, (0, 0))
        result[name] = (count + leak["count"], size + leak["bytes"])
    return result


def assert_leaks(actual: Mapping[str, tuple[int, int]], expected: Mapping[str, tuple[int, int]],
                 ignore: Iterable[str] = ()) -> None:
    """leaks_by_function() == expected, leaving out the functions in `ignore`
    (each use says why: e.g. glibc keeps the thread descriptors pthread_create
    allocates for a reused stack, so the caller of pthread_create may leak)."""
    ignored = set(ignore)
    got = {name: value for name, value in actual.items() if name not in ignored}
    assert got == dict(expected)


def assert_consistent(dump: Mapping) -> None:
    """What every dump's info must satisfy: leaks add up to the live heap."""
    assert sum(leak["count"] for leak in dump["leaks"]) == dump["heap"]["live_count"]
    assert sum(leak["bytes"] for leak in dump["leaks"]) == dump["heap"]["live_bytes"]
    assert dump["heap"]["peak_bytes"] >= dump["heap"]["live_bytes"]
    sizes = [leak["bytes"] for leak in dump["leaks"]]
    assert sizes == sorted(sizes, reverse=True), "leaks are sorted by bytes, largest first"


def dump_of_exe(dumps: Iterable[Mapping], exe_name: str) -> list[Mapping]:
    return [d for d in dumps if Path(d["header"]["exe"]).name == exe_name]


def memrec_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("memrec:")]


# `memrec run`'s closing line (analyzer/run/run_command.cpp).
RUN_SUMMARY = re.compile(r"memrec: (?:(?P<n>\d+) dumps in (?P<dir>.+); the main one: (?P<main>.+)|1 dump: (?P<one>.+))")


def run_summary(stderr: str) -> tuple[int, Path]:
    """The number of dumps `memrec run` says it wrote, and the main one;
    fails the test unless its stderr ends with that one line."""
    lines = stderr.splitlines()
    match = RUN_SUMMARY.fullmatch(lines[-1]) if lines else None
    assert match, f"no closing `memrec run` line in:\n{stderr}"
    if match["one"] is not None:
        return 1, Path(match["one"])
    return int(match["n"]), Path(match["main"])


def without_run_summary(stderr: str) -> list[str]:
    """The lines of a `memrec run`'s stderr but its closing one."""
    return [line for line in stderr.splitlines() if not RUN_SUMMARY.fullmatch(line)]


# ---- memrec report --json (tests/integration/test_report_*.py) -------------

def memrec_raw(build: Build, args: Sequence[str], timeout: float = TIMEOUT_S,
               env: Mapping[str, str | None] | None = None) -> Run:
    """Runs `memrec ARGS...` and returns the Run, whatever its exit code."""
    if not build.memrec.exists():
        pytest.fail(f"{build.memrec} is missing: build the analyzer (ninja -C {build.root})")
    argv = [str(build.memrec), *map(str, args)]
    return finish(start(argv, clean_env(env)), argv, timeout)


def report(build: Build, *dats: Path, args: Sequence[str] = ()) -> dict:
    """`memrec report --json [args] dats...`: the whole document (schema,
    version, processes, warnings); fails the test on a non-zero exit or on
    tables that do not hold together (assert_report_tables)."""
    top = [] if "--top" in args else ["--top", "1000"]  # every site, unless the test asks
    run = memrec_raw(build, ["report", "--json", *top, *args, *dats])
    assert run.returncode == 0, f"memrec report failed:\n{run.describe()}"
    try:
        doc = json.loads(run.stdout)
    except json.JSONDecodeError as error:
        pytest.fail(f"memrec report printed invalid JSON ({error}):\n{run.stdout[:2000]}")
    assert_report_tables(doc)
    return doc


# Forks `memrec report` and prints its ru_maxrss from wait4. A process's
# ru_maxrss also holds the peak of the image it exec'd from (Linux keeps the
# old mm's high-water mark at exec), and subprocess vforks from pytest, whose
# own RSS late in the suite (~240 MB) then showed up as memrec's. Forked from
# this small python instead, memrec starts from its few megabytes.
_PEAK_RSS_OF_CHILD = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss, file=sys.stderr)
"""


def run_with_peak_rss(argv: Sequence, env: dict, out_path: Path, err_path: Path) -> tuple[int, int]:
    """Runs argv (stdout and stderr to the files) and returns its exit code and
    the most memory it held resident, in KiB: its own, not pytest's."""
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        proc = subprocess.Popen(["/usr/bin/python3", "-c", _PEAK_RSS_OF_CHILD, *map(str, argv)], env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err, start_new_session=True)
    try:
        proc.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        kill_tree(proc)
        proc.wait()
        pytest.fail(f"timed out after {TIMEOUT_S} s: {' '.join(map(str, argv))}")
    lines = err_path.read_text().splitlines()
    assert proc.returncode == 0 and lines, f"{argv[0]} was not run: {lines}"
    code, peak_kib = (int(v) for v in lines[-1].split())
    err_path.write_text("\n".join(lines[:-1]))
    return code, peak_kib


def report_with_peak_rss(build: Build, *dats: Path, tmp_path: Path) -> tuple[dict, int]:
    """report() of the dumps, and the most memory `memrec report` held
    resident, in KiB: its own (RUSAGE_CHILDREN would count every child the
    test ran, the recorded program too). Its output goes to files."""
    argv = [build.memrec, "report", "--json", "--top", "1000", *dats]
    out_path, err_path = tmp_path / "report.json", tmp_path / "report.err"
    code, peak_kib = run_with_peak_rss(argv, clean_env(), out_path, err_path)
    assert code == 0, f"memrec report failed:\n{err_path.read_text()}"
    doc = json.loads(out_path.read_text())
    assert_report_tables(doc)
    return doc, peak_kib


RANKINGS = ("leaked", "peak", "allocated", "allocations", "temporary", "runtime_retained")


def assert_report_tables(doc: Mapping) -> None:
    """What schema memrec-report v3 promises of each process report (docs/analyzer.md):
    every distinct frame once in `frames`, every site once in `sites`, every
    index in range, each site's label frame one of its frames, and each
    ranking in order of its figure."""
    assert doc["schema"] == "memrec-report" and doc["version"] == 3
    for process in doc["processes"]:
        rep = process["report"]
        frames, sites, rankings = rep["frames"], rep["sites"], rep["rankings"]
        keys = [json.dumps(f, sort_keys=True) for f in frames]
        assert len(set(keys)) == len(keys), "a frame is listed twice"
        assert all(0 <= i < len(frames) for s in sites for i in s["frames"]), "a frame index out of range"
        assert sorted(rankings) == sorted(RANKINGS)
        listed = [i for ranking in RANKINGS for i in rankings[ranking]]
        assert all(0 <= i < len(sites) for i in listed), "a site index out of range"
        assert set(listed) == set(range(len(sites))), "a site no ranking lists"
        used = {i for s in sites for i in s["frames"]} | {i for s in sites for p in s.get("paths", []) for i in p}
        assert used == set(range(len(frames))), "a frame no site uses"
        for s in sites:
            if s["frames"]:
                assert 0 <= s["label_frame"] < len(s["frames"]) and s["label"], s
            else:
                assert s["label_frame"] is None and s["label"] is None, s
        for ranking in RANKINGS:
            ids = rankings[ranking]
            assert len(set(ids)) == len(ids), f"{ranking} lists a site twice"
            field = "runtime_retained_bytes" if ranking == "runtime_retained" else \
                {"leaked": "leaked_bytes", "peak": "peak_bytes", "allocated": "allocated_bytes"}.get(ranking, ranking)
            values = [sites[i][field] for i in ids]
            assert values == sorted(values, reverse=True) and 0 not in values, (ranking, values)


def ranked_sites(rep: Mapping, ranking: str) -> list[dict]:
    """The sites `ranking` lists in a process report, in its order, each with
    its frames looked up in the report's frame table (innermost first)."""
    return [resolved_site(rep, i) for i in rep["rankings"][ranking]]


def resolved_site(rep: Mapping, index: int) -> dict:
    site = rep["sites"][index]
    return {**site, "frames": [rep["frames"][f] for f in site["frames"]]}


# ---- memrec diff --json (tests/integration/test_diff_*.py) ----------------

def diff_sites(doc: Mapping) -> list[dict]:
    """The sites of a `memrec diff --json` document (schema memrec-diff v2),
    in its order, each with its frames looked up in the frame table, after
    checking the table: each frame once, every index in range, none unused."""
    assert doc["schema"] == "memrec-diff" and doc["version"] == 2
    frames, sites = doc["frames"], doc["sites"]
    keys = [json.dumps(f, sort_keys=True) for f in frames]
    assert len(set(keys)) == len(keys), "a frame is listed twice"
    growth = doc["growth"]["sites"] if doc.get("growth") else []
    used = {i for s in sites + growth for i in s["frames"]}
    assert used == set(range(len(frames))), "a frame index out of range, or a frame no site uses"
    return [{**s, "frames": [frames[i] for i in s["frames"]]} for s in sites]


def only_process(doc: Mapping) -> dict:
    """The report of a document holding exactly one process."""
    assert len(doc["processes"]) == 1, f"expected one process, got {[p['pid'] for p in doc['processes']]}"
    return doc["processes"][0]["report"]


def site_function(build: Build, site: Mapping) -> str | None:
    """The function of a call site's innermost frame in one of our test
    programs or libraries (frames in libc, libstdc++ are skipped), as written
    in the source (short_name)."""
    for frame in site["frames"]:
        if build.is_test_module(frame.get("module")) and frame.get("function"):
            return short_name(frame["function"])
    return None


def sites_by_function(build: Build, rep: Mapping, ranking: str, fields: Sequence[str]) -> dict[str, tuple]:
    """{function: (sum of each field)} over the sites listed under `ranking`
    in a process report, by site_function(); sites outside the test programs
    are left out."""
    result: dict[str, tuple] = {}
    for site in ranked_sites(rep, ranking):
        name = site_function(build, site)
        if name is None:
            continue
        old = result.get(name, (0,) * len(fields))
        result[name] = tuple(o + site[f] for o, f in zip(old, fields))
    return result


def leaked_by_function(build: Build, rep: Mapping) -> dict[str, tuple[int, int]]:
    """{function: (leaked_count, leaked_bytes)} of a process report."""
    return sites_by_function(build, rep, "leaked", ("leaked_count", "leaked_bytes"))


# ---- memrec ctl (tests/integration/test_markers.py, test_descriptors.py) -----

class Driven:
    """ctl_target (under the preload unless preload=False), driven line by
    line through its stdin; its dumps go to a fresh directory, `out_dir`."""

    def __init__(self, build, tmp_path, preload=True, env=None):
        self.build = build
        self.out_dir = fresh_dir(tmp_path, "memrec-out")
        extra = {"LD_PRELOAD": str(build.preload), "MEMREC_OUTPUT": str(self.out_dir / "%e.%p.dat")} if preload else {}
        extra.update(env or {})
        self.argv = [str(build.program("ctl_target"))]
        self.proc = start(self.argv, clean_env(extra), cwd=self.out_dir, stdin=subprocess.PIPE)

    def listening(self):
        """Warms the recorder up until its control socket answers: its pid
        and the `memrec ctl PID status` run."""
        self.send("warm")
        return self.proc.pid, wait_for_socket(self.build, self.proc.pid)

    def send(self, line, expect="ok"):
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline().decode().rstrip("\n")
        if expect is not None:
            assert answer == expect, f"{line!r} answered {answer!r}"
        return answer

    def quit(self):
        run = finish(self.proc, self.argv, TIMEOUT_S, b"quit\n")
        run.dats = sorted(self.out_dir.iterdir())
        return run


def ctl(build, *args, user=None):
    argv = [str(build.memrec), *map(str, args)]
    if user is not None:
        argv = [shutil.which("setpriv"), f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    return finish(start(argv, clean_env()), argv, TIMEOUT_S)


def wait_for_socket(build, pid):
    """`memrec ctl PID status` once the writer listens: it starts lazily, on
    the program's thread's 32nd event, and opens the socket as it starts."""
    for _ in range(200):
        status = ctl(build, "ctl", pid, "status")
        if status.returncode == 0:
            return status
        assert "has no memrec control socket" in status.stderr, status.describe()
        time.sleep(0.05)
    pytest.fail(f"no control socket for {pid}: {status.describe()}")


# The order stamps cross-thread tests run with (MEMREC_STAMP): the shared
# counter, and the TSC, each forced rather than left to auto.
STAMPS = ("counter", "tsc")


def assert_stamped_by(stamp: str, run, counters: dict):
    """The dump's counters say its events were ordered by `stamp`; tsc on a
    machine whose TSC the recorder does not trust is skipped, with its reason."""
    used = counters.get("stamp_tsc", 0)
    if stamp == "tsc" and used == 0 and "MEMREC_STAMP=tsc: " in run.stderr:
        pytest.skip(run.stderr.strip())
    assert used == (1 if stamp == "tsc" else 0), run.describe()
