"""The recorder's descriptors never touch the program's (docs/design/descriptors.md):
a fork child that dup2()s onto the lowest free number keeps what it put there,
and the recorder adds few descriptors to the program's table."""
import resource

import pytest


def test_fork_children_keep_the_descriptor_they_dup2_onto(record, run_plain):
    # 600 children of 2 ms each, 8 at a time: about 2 s under the preload on
    # 2 cores. Before the writer had a table of its own it lost 1 in 2000.
    plain = run_plain("fork_dup2", "600")
    run = record("fork_dup2", "600", output="%e.%p.dat")
    assert plain.returncode == 0, plain.describe()
    assert run.returncode == plain.returncode, run.describe()
    assert run.stdout == plain.stdout == "600 children, 0 lost descriptors\n"
    assert run.stderr == plain.stderr
    assert len(run.dats) == 601, f"one dump per process expected:\n{run.describe()}"


def _limit_descriptors(n):
    def set_limit():
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))
    return set_limit


@pytest.mark.parametrize("limit", [8])
def test_python_runs_with_few_descriptors(record, run_plain, limit):
    # python3 -c needs 6 plain; the recorder's dump, statm and stat are in its
    # writer's own table and count for nothing; libunwind's pipe takes 2.
    # (12 were needed when the recorder's files were in the program's table.)
    args = ["-c", "print(1)"]
    plain = run_plain("/usr/bin/python3", *args, preexec_fn=_limit_descriptors(limit))
    run = record("/usr/bin/python3", *args, preexec_fn=_limit_descriptors(limit))
    assert plain.returncode == 0 and plain.stdout == "1\n", plain.describe()
    assert (run.returncode, run.stdout, run.stderr) == (plain.returncode, plain.stdout, plain.stderr), run.describe()
    assert len(run.dats) == 1, run.describe()
