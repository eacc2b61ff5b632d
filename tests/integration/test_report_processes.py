"""`memrec report` on the dumps of a process tree: one report per process,
linked by pid/ppid, exec'd programs after the child that exec'd them; and a
C++ program that frees everything reporting zero leaked."""
from pathlib import Path

import memrec_support as support
from memrec_support import leaked_by_function


def test_fork_child_reports_parent_and_child_separately(build, record):
    # given fork_child: the parent leaks 1 x 1234 before the fork and 2 x 3000
    # after it, the child 3 x 2000
    run = record("fork_child")
    assert run.returncode == 0, run.describe()
    assert len(run.dats) == 2, run.describe()
    # when both dumps are reported together
    doc = support.report(build, *run.dats)
    parent, child = doc["processes"]
    # then the parent comes first, at depth 0, and the child under it
    assert (parent["pid"], parent["depth"], parent["parent"]) == (run.pid, 0, None)
    assert (child["ppid"], child["depth"], child["link"]) == (run.pid, 1, "fork")
    assert child["parent"]["pid"] == run.pid
    # and each holds its own leaks (the child inherited the pre-fork block's
    # memory, not its allocation: that one is the parent's)
    assert leaked_by_function(build, parent["report"]) == {"before_fork_leak": (1, 1234), "parent_leak": (2, 6000)}
    assert leaked_by_function(build, child["report"]) == {"child_leak": (3, 6000)}


def test_fork_exec_links_the_exec_image_to_the_forked_child(build, record):
    # given fork_exec, which leaks 1 x 999 and runs leak_three in a forked child
    run = record("fork_exec", "fork")
    assert run.returncode == 0, run.describe()
    doc = support.report(build, *run.dats)
    names = [(Path(p["exe"]).name, p["depth"], p["link"]) for p in doc["processes"]]
    # then the tree is: fork_exec, its forked child, and leak_three exec'd by that child
    assert names == [("fork_exec", 0, None), ("fork_exec", 1, "fork"), ("leak_three", 2, "exec")]
    parent, child, exec_image = doc["processes"]
    assert child["pid"] == exec_image["pid"] and child["ppid"] == parent["pid"] == run.pid
    assert leaked_by_function(build, parent["report"]) == {"parent_before_exec": (1, 999)}
    assert leaked_by_function(build, exec_image["report"]) == {"leak_here": (3, 3 * 4242)}
    # and the text report indents each process by its depth
    text = support.memrec_raw(build, ["report", *run.dats])
    assert text.returncode == 0
    headers = [line for line in text.stdout.splitlines() if "== process" in line]
    assert [len(h) - len(h.lstrip()) for h in headers] == [0, 2, 4]


def test_a_fork_child_freeing_its_parents_blocks_says_they_were_inherited(build, record):
    # given fork_frees_inherited: the parent allocates 3 x 321 in
    # parent_blocks, forks, and the child frees those 3 blocks
    run = record("fork_frees_inherited")
    assert run.returncode == 0, run.describe()
    assert run.stdout == "fork_frees_inherited: the child freed 3 inherited blocks\n"
    assert len(run.dats) == 2, run.describe()
    # when both dumps are reported together, as text
    text = support.memrec_raw(build, ["report", *run.dats])
    assert text.returncode == 0, text.describe()
    parent_text, child_text = text.stdout.split("\n  == process ")
    # then the child's 3 frees are of blocks inherited from the parent, and
    # the parent, which freed only its own blocks, has no such line
    assert "  frees of blocks inherited from the parent (allocated before the fork): 3\n" in child_text
    assert "frees of blocks" not in parent_text
    # and the child reported alone, without the tree, says only that they
    # were allocated before its recording
    child_dat = next(p for p in run.dats if p.name != f"fork_frees_inherited.{run.pid}.dat")
    alone = support.memrec_raw(build, ["report", child_dat])
    assert "frees of blocks allocated before recording: 3\n" in alone.stdout


def test_a_cpp_program_that_frees_everything_leaks_nothing(build, record):
    # given a multi-threaded C++ program that frees all it allocates and prints with printf
    run = record("cpp_threads_clean")
    assert run.returncode == 0, run.describe()
    rep = support.only_process(support.report(build, *run.dats))
    # then nothing is leaked: what glibc keeps (the DTVs of cached thread
    # stacks, stdout's buffer) is reported as the runtime's, by function
    assert rep["leaked"] == {"bytes": 0, "count": 0}
    assert rep["rankings"]["leaked"] == []
    assert rep["runtime_retained"]["count"] > 0
    retained = support.ranked_sites(rep, "runtime_retained")
    kept_by = {site["runtime_function"] for site in retained}
    assert kept_by <= {"allocate_dtv", "_dl_allocate_tls", "_IO_file_doallocate"}
    assert "_IO_file_doallocate" in kept_by
    assert sum(s["runtime_retained_bytes"] for s in retained) == rep["runtime_retained"]["bytes"]
