"""memrec export: each format of a program with known leaks, read back by the
tool it is meant for where Debian has one (go tool pprof, ms_print), else
parsed here (folded stacks, SVG as XML, JSON)."""
import gzip
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

import memrec_support as support

LEAK_BYTES = 3 * 4242


def export(build, *args, expect=0) -> support.Run:
    run = support.memrec_raw(build, ["export", *map(str, args)])
    assert run.returncode == expect, run.describe()
    return run


@pytest.fixture
def leak_three_dat(record):
    run = record("leak_three")
    assert run.returncode == 0, run.describe()
    return run.dats[0]


def test_collapsed_leaked_names_the_leaking_function_with_its_bytes(build, leak_three_dat):
    # when leak_three's leaks are exported as folded stacks
    out = export(build, leak_three_dat, "--format", "collapsed", "--metric", "leaked").stdout
    # then one line is main;leak_here with exactly 3 x 4242 bytes, outermost first
    lines = dict(line.rsplit(" ", 1) for line in out.splitlines())
    leak_lines = {stack: int(v) for stack, v in lines.items() if stack.split(";")[-1] == "leak_here"}
    assert list(leak_lines.values()) == [LEAK_BYTES]
    assert "main;leak_here" in next(iter(leak_lines))


@pytest.mark.parametrize("name", ["leaks.folded.gz", "leaks.folded.zst"])
def test_collapsed_is_compressed_as_its_name_says(build, leak_three_dat, tmp_path, name):
    # given the folded stacks written to stdout and to a .gz or .zst file
    plain = export(build, leak_three_dat, "--format", "collapsed").stdout
    out = tmp_path / name
    export(build, leak_three_dat, "--format", "collapsed", "-o", out)
    # then the file decompresses to exactly the same text
    data = out.read_bytes()
    if name.endswith(".gz"):
        text = gzip.decompress(data)
    else:
        text = subprocess.run(["zstd", "-dc", str(out)], capture_output=True, check=True,
                              timeout=support.TIMEOUT_S).stdout
    assert text.decode() == plain


@pytest.mark.parametrize("metric,field", [("allocated", "allocated_bytes"), ("allocations", "allocations")])
def test_collapsed_totals_match_the_report(build, leak_three_dat, metric, field):
    out = export(build, leak_three_dat, "--format", "collapsed", "--metric", metric).stdout
    total = sum(int(line.rsplit(" ", 1)[1]) for line in out.splitlines())
    rep = support.only_process(support.report(build, leak_three_dat))
    assert total == rep[field]


def test_json_is_the_report_document(build, leak_three_dat):
    doc = json.loads(export(build, leak_three_dat, "--format", "json").stdout)
    assert doc["schema"] == "memrec-report" and doc["version"] == 3
    rep = doc["processes"][0]["report"]
    assert support.leaked_by_function(build, rep) == {"leak_here": (3, LEAK_BYTES)}
    assert rep == support.only_process(support.report(build, leak_three_dat))


def test_json_lists_each_site_and_each_distinct_frame_once(build, leak_three_dat):
    # given leak_three: leak_here (3 x 4242, leaked), churn's loop (100 blocks) and its malloc(0), all under main
    doc = json.loads(export(build, leak_three_dat, "--format", "json").stdout)
    support.assert_report_tables(doc)  # no frame twice, every index in range, rankings in order
    rep = doc["processes"][0]["report"]
    frames, sites, rankings = rep["frames"], rep["sites"], rep["rankings"]
    # then the sites point into one table: main's two call lines are two
    # frames, and the callers of main are the same three frames for all sites
    labels = [[frames[i]["label"] for i in s["frames"]] for s in sites]
    outer = ["main", "__libc_start_call_main", "__libc_start_main_impl", "_start"]
    assert labels == [["leak_here", *outer], ["churn", *outer], ["churn", *outer]]
    assert [f["function"] for f in frames].count("main") == 2
    assert sites[0]["frames"][2:] == sites[1]["frames"][2:] == sites[2]["frames"][2:]
    assert sites[1]["frames"][1:] == sites[2]["frames"][1:]  # churn's loop and its malloc(0)
    assert frames[sites[1]["frames"][0]]["line"] != frames[sites[2]["frames"][0]]["line"]
    # and each site is listed once, with its own figures, however many rankings name it
    assert [(s["allocations"], s["allocated_bytes"], s["leaked_bytes"], s["leaked_count"]) for s in sites] == [
        (3, LEAK_BYTES, LEAK_BYTES, 3), (100, sum(i * 37 + 1 for i in range(100)), 0, 0), (1, 0, 0, 0)]
    assert sum(s["allocations"] for s in sites) == rep["allocations"] == 104
    assert rankings["leaked"] == [0] and rankings["allocations"] == [1, 0, 2]
    assert rankings["peak"] == [1, 0] and rankings["runtime_retained"] == []


def test_json_escapes_the_kernels_bytes_in_paths_and_arguments(build, tmp_path):
    # given leak_three run from a file whose name has a quote, a backslash, a
    # tab and a byte that is not UTF-8, with such arguments too
    name = b'le"ak\\\tthree\xff'
    exe = tmp_path / os.fsdecode(name)
    shutil.copy(build.program("leak_three"), exe)
    args = [os.fsdecode(b"a\x01b\n"), os.fsdecode(b"\xc3(")]
    run = support.record(build, exe, args, tmp_path=tmp_path)
    assert run.returncode == 0, run.describe()
    # when it is exported as JSON
    out = tmp_path / "report.json"
    export(build, run.dats[0], "--format", "json", "-o", out)
    # then the file is UTF-8 and JSON, with U+FFFD for each ill-formed sequence
    doc = json.loads(out.read_bytes().decode("utf-8"))
    (process,) = doc["processes"]
    want_exe = os.fsencode(exe).decode("utf-8", errors="replace")
    assert want_exe.endswith('le"ak\\\tthree\ufffd')
    assert process["exe"] == want_exe
    assert process["cmdline"][1:] == ["a\x01b\n", "\ufffd("]
    rep = process["report"]
    (leak,) = support.ranked_sites(rep, "leaked")
    assert (leak["frames"][0]["function"], leak["frames"][0]["module"]) == ("leak_here", want_exe)
    assert (leak["leaked_count"], leak["leaked_bytes"]) == (3, LEAK_BYTES)


def test_svg_is_standalone_xml_with_escaped_names(build, record, tmp_path):
    # given a C++ program whose frames include std::vector<…>::push_back(std::string&&),
    # kept as leaves with --raw-frames
    run = record("cpp_new")
    assert run.returncode == 0, run.describe()
    out = tmp_path / "flame.svg"
    export(build, run.dats[0], "--format", "svg", "--metric", "allocated", "--raw-frames", "-o", out)
    text = out.read_text()
    # then it parses as XML, names its functions, and loads nothing from outside
    root = ET.fromstring(text)
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any("leak_widgets" in t for t in titles)
    assert any("&" in t for t in titles), "a name with '&' survives escaping"
    assert re.findall(r"(?:href|src)\s*=", text) == []
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert root.find("{http://www.w3.org/2000/svg}script") is not None


@pytest.mark.skipif(shutil.which("go") is None, reason="go (Debian golang-go) is not installed")
def test_pprof_top_and_traces_name_the_leak_with_exact_bytes(build, leak_three_dat, tmp_path):
    out = tmp_path / "heap.pb.gz"
    export(build, leak_three_dat, "--format", "pprof", "-o", out)
    assert gzip.decompress(out.read_bytes())  # a gzip stream
    env = support.clean_env({"HOME": str(tmp_path), "GOCACHE": str(tmp_path / "gocache")})

    def pprof(*args):
        return subprocess.run(["go", "tool", "pprof", "-symbolize=none", *args, str(out)], capture_output=True,
                              text=True, timeout=120, env=env, check=True).stdout

    # when go tool pprof lists the in-use space (live at the end) in bytes
    top = pprof("-top", "-sample_index=inuse_space", "-unit=B")
    # then leak_here holds exactly 3 x 4242 bytes
    assert re.search(rf"^\s*{LEAK_BYTES}B\s.*\sleak_here$", top, re.MULTILINE), top
    objects = pprof("-top", "-sample_index=inuse_objects")
    assert re.search(r"^\s*3\s.*\sleak_here$", objects, re.MULTILINE), objects
    # and its trace goes leak_here <- main, with the source line kept
    traces = pprof("-traces", "-sample_index=inuse_space", "-unit=B")
    block = next(b for b in traces.split("-----------+") if "leak_here" in b)
    assert f"{LEAK_BYTES}B" in block and "main" in block
    lines = pprof("-top", "-lines", "-sample_index=inuse_space", "-unit=B")
    assert re.search(r"leak_here .*leak_three\.c:\d+", lines), lines


def test_pprof_is_a_gzipped_profile_with_the_four_sample_types(build, leak_three_dat, tmp_path):
    # Checked without go too: the string table names the sample types.
    out = tmp_path / "heap.pb.gz"
    export(build, leak_three_dat, "--format", "pprof", "-o", out)
    data = gzip.decompress(out.read_bytes())
    assert b"alloc_space" in data and b"inuse_space" in data and b"leak_here" in data


@pytest.mark.skipif(shutil.which("ms_print") is None, reason="ms_print (Debian valgrind) is not installed")
def test_massif_renders_in_ms_print_with_the_peak_tree(build, record, tmp_path):
    # given peak_known, whose peak is 10 x 100000 bytes from alloc_big
    run = record("peak_known")
    assert run.returncode == 0, run.describe()
    rep = support.only_process(support.report(build, run.dats[0]))
    out = tmp_path / "massif.out"
    export(build, run.dats[0], "--format", "massif", "-o", out)
    # when ms_print renders it
    text = subprocess.run(["ms_print", str(out)], capture_output=True, text=True, timeout=60, check=True).stdout
    # then the peak snapshot shows the peak's bytes and alloc_big under it with its 1000000 bytes
    peak = f"{rep['peak']['bytes']:,}"
    assert re.search(rf"\(peak\)", text), text
    assert re.search(rf"\({re.escape(peak)}B\) \(heap allocation functions\)", text), text
    assert re.search(r"\(1,000,000B\) 0x[0-9A-F]+: alloc_big \(peak_known\.c:\d+\)", text), text


@pytest.mark.parametrize("args,code", [
    (["--format", "nope"], 1),
    (["--format", "collapsed", "--metric", "nope"], 1),
    (["--format", "collapsed", "--from", "soon"], 1),
    ([], 1),
])
def test_bad_usage_exits_1(build, leak_three_dat, args, code):
    run = export(build, leak_three_dat, *args, expect=code)
    assert "memrec: export" in run.stderr


def test_bad_input_exits_2_with_a_message(build, tmp_path):
    missing = tmp_path / "missing.dat"
    run = export(build, missing, "--format", "collapsed", expect=2)
    assert str(missing) in run.stderr
    junk = tmp_path / "junk.dat"
    junk.write_bytes(b"not a dump at all, not even close" * 10)
    run = export(build, junk, "--format", "pprof", expect=2)
    assert str(junk) in run.stderr


def test_a_process_tree_exports_one_stack_root_per_process(build, record):
    # given fork_child: the parent leaks from parent_leak, the child 3 x 2000 from child_leak
    run = record("fork_child")
    assert run.returncode == 0 and len(run.dats) == 2, run.describe()
    out = export(build, *run.dats, "--format", "collapsed", "--metric", "leaked").stdout
    # then every stack starts with its process, and each leak is under its own
    roots = {line.split(";", 1)[0] for line in out.splitlines()}
    assert len(roots) == 2 and all(re.fullmatch(r"fork_child \(pid \d+\)", r) for r in roots), roots
    child = [line for line in out.splitlines() if line.rsplit(" ", 1)[0].endswith(";child_leak")]
    assert [int(line.rsplit(" ", 1)[1]) for line in child] == [3 * 2000]
