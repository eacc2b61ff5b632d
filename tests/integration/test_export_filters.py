"""memrec export's filters (docs/exports.md "Filters") and its massif
snapshots over time, on timed_phases, whose heap changes at known times:
  0 ms    phase_one   4 x 10000, freed at 600 ms
  300 ms  phase_two   leaks 2 x 50000 (the peak: 140000)
  600 ms  phase_three leaks 3 x 7000; grow_block leaks 900 (malloc 100, realloc
          500, realloc 900); many_small 250 temporaries of 100..349 bytes; the
          thread "phase-worker" (thread index 1) leaks 4321 from worker_leak.
A filtered export is the profile of the selected allocations alone."""
import json
import re
import shutil
import subprocess

import pytest

import memrec_support as support

MS = 1_000_000
MAIN = "_start;__libc_start_main_impl;__libc_start_call_main;main"


def export(build, *args, expect=0) -> support.Run:
    run = support.memrec_raw(build, ["export", *map(str, args)])
    assert run.returncode == expect, run.describe()
    return run


def folded(text: str) -> dict[str, int]:
    """Folded stacks as {stack: value}."""
    return {line.rsplit(" ", 1)[0]: int(line.rsplit(" ", 1)[1]) for line in text.splitlines()}


@pytest.fixture(scope="module")
def phases(build, tmp_path_factory):
    run = support.record(build, "timed_phases", tmp_path=tmp_path_factory.mktemp("timed_phases"))
    assert run.returncode == 0, run.describe()
    return run.dats[0]


@pytest.mark.parametrize("args,expected", [
    # one thread: the worker's single allocation
    (["--thread-index", "1"], {"clone3;start_thread;worker_leak": 4321}),
    # one size: phase_one's four blocks
    (["--min-size", "10000", "--max-size", "10000"], {f"{MAIN};phase_one": 40000}),
    # alive at 450 ms: phase_one's blocks and phase_two's
    (["--alive-at", "450ms"], {f"{MAIN};phase_one": 40000, f"{MAIN};phase_two": 100000}),
    # a regex on function names
    (["--match", "^phase_t", "--metric", "leaked"], {f"{MAIN};phase_two": 100000, f"{MAIN};phase_three": 21000}),
    # the flamegraph's search over 150..450 ms by the peak: what the view's summary sums
    (["--search", "phase_one", "--metric", "peak", "--from", "150ms", "--to", "450ms"], {f"{MAIN};phase_one": 40000}),
    # leaked only, 900 bytes and up (the runtime's 304-byte dtv left out): every program leak
    (["--leaked-only", "--min-size", "900"], {f"{MAIN};phase_two": 100000, f"{MAIN};phase_three": 21000,
                                              f"{MAIN};grow_block": 900, "clone3;start_thread;worker_leak": 4321}),
    # lived between 100 ms and 1 s: only phase_one's blocks (freed after about 600 ms)
    (["--min-lifetime", "100ms", "--max-lifetime", "1s", "--metric", "allocations"], {f"{MAIN};phase_one": 4}),
    # the realloc chain's first two blocks lived until the next realloc: not leaked
    (["--match", "^grow_block$", "--leaked-only", "--metric", "allocations"], {f"{MAIN};grow_block": 1}),
])
def test_a_filter_exports_exactly_the_selected_allocations(build, phases, args, expected):
    out = export(build, phases, "--format", "collapsed", *args).stdout
    assert folded(out) == expected


def test_a_filtered_export_keeps_its_table_in_the_spill_dir_or_says_why_not(build, phases, tmp_path):
    args = ["--format", "collapsed", "--alive-at", "450ms"]
    expected = {f"{MAIN};phase_one": 40000, f"{MAIN};phase_two": 100000}
    spill = tmp_path / "spill"
    spill.mkdir()
    assert folded(export(build, phases, *args, "--spill-dir", spill).stdout) == expected
    assert list(spill.iterdir()) == []  # unlinked files only
    missing = export(build, phases, *args, "--spill-dir", tmp_path / "missing")
    assert folded(missing.stdout) == expected
    assert f"memrec: cannot keep allocation tables in {tmp_path / 'missing'}" in missing.stderr


@pytest.mark.parametrize("metric,expected", [
    # the view's sort "leaked blocks", program sites only
    ("leaked-count", {f"{MAIN};phase_two": 2, f"{MAIN};phase_three": 3, f"{MAIN};grow_block": 1,
                      "clone3;start_thread;worker_leak": 1}),
    # many_small frees each block before its next allocation; each of grow_block's two
    # reallocs releases the block before allocating the next: the report's 252
    ("temporary", {f"{MAIN};many_small": 250, f"{MAIN};grow_block": 2}),
])
def test_the_views_other_sorts_are_export_metrics(build, phases, metric, expected):
    assert folded(export(build, phases, "--format", "collapsed", "--metric", metric).stdout) == expected


def test_runtime_retained_is_what_the_runtime_kept(build, phases):
    rep = support.only_process(support.report(build, phases))
    out = folded(export(build, phases, "--format", "collapsed", "--metric", "runtime-retained").stdout)
    assert sum(out.values()) == rep["runtime_retained"]["bytes"] == 304
    # the program's frame that made the thread is the leaf; ld.so's and libc's are trimmed
    assert all(stack.endswith(";main") for stack in out), out
    raw = folded(export(build, phases, "--format", "collapsed", "--metric", "runtime-retained", "--raw-frames").stdout)
    assert sum(raw.values()) == 304
    assert all(stack.endswith(";allocate_dtv;calloc") for stack in raw), raw


def test_a_filtered_profile_has_its_own_peak_and_totals(build, phases):
    # given only phase_one's allocations, of the whole run
    doc = json.loads(export(build, phases, "--format", "json", "--match", "^phase_one$").stdout)
    support.assert_report_tables(doc)
    rep = support.only_process(doc)
    # then the figures are those of a program that made only them
    assert (rep["allocations"], rep["frees"], rep["allocated_bytes"]) == (4, 4, 40000)
    assert rep["peak"]["bytes"] == 40000
    assert rep["leaked"] == {"bytes": 0, "count": 0}
    assert rep["unmatched_frees"] == 0
    # and phase_one's site is the only one, with only its own frames in the table
    (site,) = rep["sites"]
    assert [rep["frames"][i]["label"] for i in site["frames"]] == ["phase_one", *MAIN.split(";")[::-1]]
    assert len(rep["frames"]) == len(site["frames"]) == 5
    assert (site["allocations"], site["allocated_bytes"], site["peak_bytes"]) == (4, 40000, 40000)
    assert rep["rankings"] == {"leaked": [], "peak": [0], "allocated": [0], "allocations": [0], "temporary": [],
                               "runtime_retained": []}


@pytest.mark.skipif(shutil.which("go") is None, reason="go (Debian golang-go) is not installed")
def test_pprof_of_one_thread_holds_only_its_allocation(build, phases, tmp_path):
    out = tmp_path / "worker.pb.gz"
    export(build, phases, "--format", "pprof", "--thread-index", "1", "-o", out)
    env = support.clean_env({"HOME": str(tmp_path), "GOCACHE": str(tmp_path / "gocache")})
    top = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-top", "-sample_index=alloc_space", "-unit=B",
                          str(out)], capture_output=True, text=True, timeout=120, env=env, check=True).stdout
    rows = re.findall(r"^\s*(\d+)B\s+[\d.]+%\s+[\d.]+%\s+\d+B\s+[\d.]+%\s+(\S+)$", top, re.MULTILINE)
    assert [(int(b), f) for b, f in rows if int(b) > 0] == [(4321, "worker_leak")], top


@pytest.mark.parametrize("args,message", [
    (["--format", "heaptrack", "--leaked-only"], "heaptrack files hold every allocation"),
    (["--format", "collapsed", "--thread-index", "7"], "has 2 threads (0 to 1"),
    (["--format", "collapsed", "--site", "999"], "call sites (0 to"),
    (["--format", "collapsed", "--match", "("], "not a valid regular expression"),
    (["--format", "collapsed", "--min-size", "big"], "--min-size 'big'"),
    (["--format", "collapsed", "--min-lifetime", "2s", "--max-lifetime", "1s"], "--min-lifetime is longer"),
])
def test_a_bad_filter_exits_1_naming_it(build, phases, args, message):
    run = export(build, phases, *args, expect=1)
    assert message in run.stderr


def test_a_thread_or_site_names_one_dumps(build, phases):
    run = export(build, phases, phases, "--format", "collapsed", "--thread-index", "0", expect=1)
    assert "give one dump" in run.stderr


def massif_snapshots(text: str) -> list[tuple[str, int, str]]:
    """(time, mem_heap_B, heap_tree) of each snapshot, the time as written."""
    return re.findall(r"^time=(\S+)\nmem_heap_B=(\d+)\n(?:.*\n){2}heap_tree=(\w+)$", text, re.MULTILINE)


def ms_text(ns: int) -> str:
    whole, frac = divmod(ns, MS)
    return f"{whole}.{frac:06d}".rstrip("0").rstrip(".") if frac else str(whole)


def test_massif_holds_the_heap_over_time_in_increasing_times(build, phases, tmp_path):
    rep = support.only_process(support.report(build, phases))
    out = tmp_path / "massif.out"
    export(build, phases, "--format", "massif", "-o", out)
    snaps = [(t, int(b), tree) for t, b, tree in massif_snapshots(out.read_text())]
    times = [float(t) for t, _, _ in snaps]
    # then there are snapshots of each phase, in strictly increasing times
    assert len(snaps) >= 5, snaps
    assert times == sorted(set(times)), snaps
    assert snaps[0] == ("0", 0, "empty")
    assert any(b == 40000 and 0 < t < 300 for t, (_, b, _) in zip(times, snaps)), snaps
    # the peak where the report has it, to the ns
    peak = [s for s in snaps if s[2] == "peak"]
    assert peak == [(ms_text(rep["peak"]["time_ns"]), 140000, "peak")]
    # and at the end the heap the program left: its leaks and the runtime's
    assert snaps[-1][1] == rep["leaked"]["bytes"] + rep["runtime_retained"]["bytes"] == 126221 + 304
    # (timed_phases sleeps until ~900 ms, which a loaded machine stretches; its
    # last events come at 600 ms but carry the recorder's last tick, taken up to
    # a few ms earlier: FORMAT.md, "Order")
    assert 590 < times[-1] <= rep["duration_ns"] / MS
    # times below 1 ms apart stay apart: some have decimals
    assert any("." in t for t, _, _ in snaps), snaps


@pytest.mark.skipif(shutil.which("ms_print") is None, reason="ms_print (Debian valgrind) is not installed")
def test_ms_print_renders_fractional_times_and_the_filtered_peak(build, phases, tmp_path):
    # given the massif export of phase_two's and phase_one's allocations alone
    out = tmp_path / "massif.out"
    export(build, phases, "--format", "massif", "--match", "^phase_(one|two)$", "-o", out)
    snaps = massif_snapshots(out.read_text())
    # when ms_print renders it
    text = subprocess.run(["ms_print", str(out)], capture_output=True, text=True, timeout=60, check=True).stdout
    # then its table lists every snapshot with its time as written, and the peak tree splits 140000
    for n, (time, heap, _) in enumerate(snaps):
        assert re.search(rf"^\s*{n}\s+{re.escape(time)}\s+{int(heap):,}\s", text, re.MULTILINE), (n, time, text)
    assert re.search(r"\(140,000B\) \(heap allocation functions\)", text), text
    assert re.search(r"\(100,000B\) 0x[0-9A-F]+: phase_two \(timed_phases\.c:\d+\)", text), text
    assert re.search(r"\(40,000B\) 0x[0-9A-F]+: phase_one \(timed_phases\.c:\d+\)", text), text
    # and the heap ends at phase_two's leak: phase_one's blocks were freed
    assert int(snaps[-1][1]) == 100000
