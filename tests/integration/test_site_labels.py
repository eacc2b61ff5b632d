"""Call sites named by the program's own code: no frame of libmemrec.so (nor
of the allocator memrec forwarded to) in any recorded stack, for every hook;
each site labelled by its innermost frame of the program, with the library
frames folded under it listed; --raw-frames and --group label."""
import pytest

import memrec_support as support

# Every allocation hook the report lists: malloc/free (leak_three), realloc
# (realloc_chain), calloc, reallocarray and the aligned family (aligned), every
# form of operator new with libstdc++'s and with allocators that replace it
# (cpp_new*), the bad_alloc thrown from a failed new (cpp_new's
# huge_requests_fail), and threads (cpp_threads_clean).
HOOK_PROGRAMS = ["leak_three", "realloc_chain", "aligned", "cpp_new", "cpp_new_tcmalloc", "cpp_new_mimalloc", "cpp_new_jemalloc",
                 "cpp_threads_clean"]


def all_frames(doc):
    return [f for p in doc["processes"] for f in p["report"]["frames"]]


@pytest.mark.parametrize("program", HOOK_PROGRAMS)
def test_no_recorder_or_operator_new_frame_is_ever_recorded(build, record, program):
    # given a program that calls one family of hooks, recorded
    if not (build.programs_dir / program).exists():
        pytest.skip(f"{program} was not built (its allocator is not installed)")
    run = record(program)
    assert run.returncode == 0, run.describe()
    # when its report lists every frame of every site, as recorded
    doc = support.report(build, *run.dats, args=["--raw-frames"])
    frames = all_frames(doc)
    assert frames
    # then none is memrec's, and no operator new is a frame: the stack starts
    # at the caller of the program's operator new, whoever implements it
    ours = [f for f in frames if "libmemrec" in (f["module"] or "")]
    assert ours == [], ours
    news = [f["label"] for f in frames if f["label"].startswith(("operator new", "memrec::"))]
    assert news == [], news


@pytest.mark.parametrize("program", ["cpp_new", "cpp_new_tcmalloc"])
def test_cpp_leaks_are_named_by_their_function_in_frame_zero(build, record, program):
    # given cpp_new's known leaks (see its comment)
    if not (build.programs_dir / program).exists():
        pytest.skip(f"{program} was not built (its allocator is not installed)")
    run = record(program)
    rep = support.only_process(support.report(build, *run.dats))
    # when the leaked sites are read
    leaked = {}
    for site in support.ranked_sites(rep, "leaked"):
        frame = site["frames"][site["label_frame"]]
        if not build.is_test_module(frame["module"]):
            continue  # tcmalloc's own blocks, kept for good
        leaked[support.short_name(frame["function"])] = (site["leaked_count"], site["leaked_bytes"],
                                                         site["label_frame"])
    # then each is its own function, at frame 0: operator new[] was never recorded
    assert leaked == {"leak_widgets": (5, 5 * 777, 0), "leak_big_aligned": (2, 2 * 640, 0),
                      "leak_nothrow": (3, 3 * 333, 0)}


def test_a_site_is_labelled_by_the_program_frame_with_library_frames_folded(build, record):
    # given a C++ program whose string and vector growth reach operator new
    # through libstdc++'s inlined templates and its own compiled code
    run = record("cpp_new")
    rep = support.only_process(support.report(build, *run.dats))
    # when a site with folded frames is read
    folded = [s for s in (support.resolved_site(rep, i) for i in range(len(rep["sites"]))) if s["label_frame"] > 0]
    assert folded, "cpp_new's std::string/vector allocations should fold libstdc++ frames"
    for site in folded:
        # then everything inside its label frame is the C++ library's, and the
        # label frame is the program's, named by its short name
        label = site["frames"][site["label_frame"]]
        for f in site["frames"][:site["label_frame"]]:
            assert "/include/c++/" in (f["file"] or "") or "libstdc++" in (f["module"] or ""), f
        assert build.is_test_module(label["module"]), site
        assert "(" not in site["label"].replace("(anonymous namespace)", ""), site["label"]
        assert site["via"], site


def test_raw_frames_and_text_report_show_the_label_and_the_folded_frames(build, record, memrec_cli):
    # given cpp_new recorded
    run = record("cpp_new")
    # when the text report is printed plain and with --raw-frames
    plain = support.memrec_raw(build, ["report", *run.dats])
    raw = support.memrec_raw(build, ["report", "--raw-frames", *run.dats])
    assert plain.returncode == 0 and raw.returncode == 0, plain.describe() + raw.describe()
    # then both list the same figures; the labelled one marks library frames
    # and names every leak by its function
    assert "[library]" in plain.stdout and "[library]" not in raw.stdout
    section = plain.stdout.split("top call sites by leaked bytes:")[1].split("top call sites by")[0]
    for name in ("leak_widgets", "leak_big_aligned", "leak_nothrow"):
        assert f"::{name} (cpp_new.cpp:" in section, section


def test_group_by_label_merges_the_paths_to_one_line(build, record):
    # given peak_known, whose sites each allocate from one line (no two paths)
    # and cpp_new, whose every_form_freed allocates from several lines
    run = record("cpp_new")
    by_stack = support.only_process(support.report(build, *run.dats))
    grouped = support.only_process(support.report(build, *run.dats, args=["--group", "label"]))
    # then the totals are the same and no two grouped sites share a label line
    for field in ("allocations", "allocated_bytes", "leaked_bytes"):
        assert sum(s[field] for s in by_stack["sites"]) == sum(s[field] for s in grouped["sites"]), field

    def line_of(rep, i):
        s = support.resolved_site(rep, i)
        f = s["frames"][s["label_frame"]] if s["frames"] else {}
        return (f.get("function"), f.get("file"), f.get("line"))

    lines = [line_of(grouped, i) for i in range(len(grouped["sites"]))]
    assert len(set(lines)) == len(lines)
    assert len(grouped["sites"]) <= len(by_stack["sites"])
    merged = [s for s in grouped["sites"] if "paths" in s]
    assert all(len(s["paths"]) >= 2 for s in merged)


def test_group_takes_stack_or_label_only(build):
    run = support.memrec_raw(build, ["report", "--group", "function", "nonexistent.dat"])
    assert run.returncode == 1
    assert "--group takes stack or label" in run.stderr
