"""`memrec report --json` on the test programs: exact leaks per call site,
the known peak, temporaries, the time window, and a cut dump."""
import functools

import pytest

import memrec_support as support
from memrec_support import leaked_by_function, only_process, sites_by_function


@pytest.fixture(scope="session")
def report(build, memrec_cli):
    return functools.partial(support.report, build)


def recorded_report(record, report, program, *args):
    run = record(program, *args)
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 1, run.describe()
    return only_process(report(run.dats[0])), run


def test_leak_three_reports_three_blocks_from_leak_here(build, record, report):
    # given leak_three, which leaks 3 x 4242 bytes from leak_here and frees the rest
    rep, _ = recorded_report(record, report, "leak_three")
    # then the report holds exactly that leak, at leak_here's call site
    assert leaked_by_function(build, rep) == {"leak_here": (3, 3 * 4242)}
    assert rep["leaked"] == {"bytes": 3 * 4242, "count": 3}
    assert rep["runtime_retained"] == {"bytes": 0, "count": 0}
    assert rep["dump"]["complete"] is True
    # and the innermost frame of the site is leak_here itself, with its source line
    (site,) = support.ranked_sites(rep, "leaked")
    top = site["frames"][0]
    assert top["function"] == "leak_here" and top["file"].endswith("leak_three.c") and top["line"] > 0
    assert top["inlined"] is False
    # and the counts are those of the program: 3 + 100 + malloc(0), all but 3 freed
    assert rep["allocations"] == 104
    assert rep["frees"] == 101
    assert sites_by_function(build, rep, "allocations", ("allocations",))["churn"] == (101,)


@pytest.mark.parametrize("program,expected", [
    ("realloc_chain", {"grow_buffer": (1, 50000), "realloc_null": (1, 777), "realloc_fail": (1, 1212)}),
    ("aligned", {"leak_memalign": (1, 1000), "leak_aligned_alloc": (1, 2048), "leak_posix_memalign": (1, 3000),
                 "leak_valloc": (1, 4000), "leak_pvalloc": (1, 5000), "leak_calloc": (1, 6000),
                 "leak_reallocarray": (1, 7000)}),
])
def test_known_programs_report_exactly_their_leaks(build, record, report, program, expected):
    # given a program whose leaks are known, when its dump is reported
    rep, _ = recorded_report(record, report, program)
    # then each leaking function's site has exactly those blocks, and nothing else leaks
    assert leaked_by_function(build, rep) == expected
    assert rep["leaked"]["count"] == sum(c for c, _ in expected.values())
    assert rep["leaked"]["bytes"] == sum(b for _, b in expected.values())


def test_cpp_new_leaks_are_reported_at_their_call_sites(build, record, report, info, leaks_by_function):
    # given cpp_new, whose leaks `memrec info` already attributes by function
    run = record("cpp_new")
    assert run.returncode == 0, run.describe()
    expected = leaks_by_function(info(run.dats[0]))
    assert expected, "cpp_new leaks something"
    # then report attributes the same blocks to the same functions
    rep = only_process(report(run.dats[0]))
    assert leaked_by_function(build, rep) == expected
    # and their function is the innermost frame of those sites, which name it:
    # no operator new (libstdc++'s or the preload's) was recorded under it
    for site in support.ranked_sites(rep, "leaked"):
        if support.site_function(build, site) is not None:
            assert support.short_name(site["frames"][0]["function"]) == support.site_function(build, site)
            assert site["label_frame"] == 0


def test_thread_exit_leaks_one_block_per_thread(build, record, report):
    # given 8 threads that each leak 1 x 1111 from thread_leak and exit at once
    rep, _ = recorded_report(record, report, "thread_exit")
    # then all 8 reach the report as one site; glibc's thread bookkeeping is not a leak
    assert leaked_by_function(build, rep) == {"thread_leak": (8, 8 * 1111)}
    assert rep["leaked"] == {"bytes": 8 * 1111, "count": 8}


def test_dlopen_lib_leaks_from_the_loaded_library(build, record, report, info, leaks_by_function):
    # given dlopen_lib, which leaks from a library it dlopen()s
    run = record("dlopen_lib")
    assert run.returncode == 0, run.describe()
    expected = leaks_by_function(info(run.dats[0]))
    assert expected
    rep = only_process(report(run.dats[0]))
    # then the same functions leak the same blocks, the library's frames named
    assert leaked_by_function(build, rep) == expected
    assert rep["leaked"]["count"] == sum(c for c, _ in expected.values())


def test_peak_is_the_ten_big_blocks_held_at_once(build, record, report):
    # given peak_known: 10 x 100000 live at once, all freed, then 5 x 1000 leaked
    rep, _ = recorded_report(record, report, "peak_known")
    # then the peak is exactly 1000000 plus what the runtime held then (nothing here)
    assert rep["peak"]["bytes"] - rep["peak"]["runtime_bytes"] == 1000000
    assert rep["peak"]["runtime_bytes"] == 0
    assert rep["peak"]["rss_bytes"] is None or rep["peak"]["rss_bytes"] > 0
    assert 0 <= rep["peak"]["time_ns"] <= rep["duration_ns"]
    # and alloc_big's site holds all of it at the peak, alloc_small's nothing
    peak = sites_by_function(build, rep, "peak", ("peak_bytes",))
    assert peak == {"alloc_big": (1000000,)}
    assert leaked_by_function(build, rep) == {"alloc_small": (5, 5000)}
    allocated = sites_by_function(build, rep, "allocated", ("allocations", "allocated_bytes"))
    assert allocated == {"alloc_big": (10, 1000000), "alloc_small": (5, 5000)}


def test_temporaries_are_counted_per_call_site(build, record, report):
    # given temporaries: 7 blocks freed at once from temp_here, and 5 pairs
    # a (pair_first), b (pair_second) freed a then b
    rep, _ = recorded_report(record, report, "temporaries")
    # then temp_here's 7 and pair_second's 5 are temporary, pair_first's are not
    temporary = sites_by_function(build, rep, "temporary", ("temporary", "allocations"))
    assert temporary == {"temp_here": (7, 7), "pair_second": (5, 5)}
    assert rep["temporary"] == 12
    assert leaked_by_function(build, rep) == {"keep_one": (3, 48)}


def test_the_size_and_lifetime_classes_hold_every_allocation(build, record, report):
    # given leak_three: malloc(i * 37 + 1) for i < 100 (freed), a malloc(0) (freed) and 3 x 4242 (leaked)
    run = record("leak_three")
    rep = only_process(report(run.dats[0]))
    sizes = {(c["from"], c["to"]): c["count"] for c in rep["histograms"]["sizes"]}
    expected = {}
    for size in [i * 37 + 1 for i in range(100)] + [0] + [4242] * 3:
        bounds = (0, 0) if size == 0 else (1 << (size.bit_length() - 1), (1 << size.bit_length()) - 1)
        expected[bounds] = expected.get(bounds, 0) + 1
    assert sizes == expected
    assert sum(c["bytes"] for c in rep["histograms"]["sizes"]) == rep["allocated_bytes"]
    assert sum(c["count"] for c in rep["histograms"]["lifetimes_ns"]) == 101
    assert rep["histograms"]["unfreed"] == {"count": 3, "bytes": 3 * 4242}
    # and the text report shows the same classes with --histograms
    text = support.memrec_raw(build, ["report", "--histograms", "--top", "0", run.dats[0]])
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert [ln.split()[5:9] for ln in lines if ln.strip().startswith("4 KiB - 8 KiB")] == [["3", "12.4", "KiB", "###"]]
    assert any(ln.split()[:3] == ["0", "B", "1"] for ln in lines)
    assert any(ln.split()[:6] == ["still", "live", "at", "the", "end", "3"] for ln in lines)
    # and without it the text has none
    assert "allocation sizes" not in support.memrec_raw(build, ["report", run.dats[0]]).stdout


def test_a_window_counts_only_its_events(build, record, report):
    # given a dump of leak_three
    run = record("leak_three")
    whole = only_process(report(run.dats[0]))
    # when the window starts after the last event, nothing is counted
    empty = only_process(report(run.dats[0], args=["--from", "1h"]))
    assert (empty["allocations"], empty["leaked"]["count"], empty["peak"]["bytes"]) == (0, 0, 0)
    # and a window from the start to long after the end counts everything
    full = only_process(report(run.dats[0], args=["--from", "0s", "--to", "+1h"]))
    assert (full["allocations"], full["leaked"], full["peak"]) == (whole["allocations"], whole["leaked"], whole["peak"])
    assert full["window"] == {"from_ns": 0, "to_ns": 3600 * 10**9}


def test_a_bad_time_is_a_usage_error(build, record):
    run = record("leak_three")
    result = support.memrec_raw(build, ["report", "--from", "soon", run.dats[0]])
    assert result.returncode == 1
    assert "not a time" in result.stderr


def test_a_cut_dump_reports_how_far_it_got(build, record, report, tmp_path):
    # given a dump cut in the middle of its last frame
    run = record("thread_exit")
    data = run.dats[0].read_bytes()
    cut = tmp_path / "cut.dat"
    cut.write_bytes(data[: len(data) - 7])
    # when it is reported, then memrec says where it was cut and what was lost, and does not fail
    rep = only_process(report(cut))
    assert rep["dump"]["complete"] is False
    assert rep["dump"]["truncated_at"] is not None
    assert rep["dump"]["lost_bytes"] == len(data) - 7 - rep["dump"]["truncated_at"]
    text = support.memrec_raw(build, ["report", cut])
    assert text.returncode == 0 and "cut at offset" in text.stdout


def test_a_missing_file_exits_2(build, tmp_path):
    result = support.memrec_raw(build, ["report", tmp_path / "nope.dat"])
    assert result.returncode == 2
    assert "nope.dat" in result.stderr


def test_every_subcommand_has_help(build):
    for command in ("run", "report", "info"):
        result = support.memrec_raw(build, [command, "--help"])
        assert result.returncode == 0 and "usage: memrec " + command in result.stdout
