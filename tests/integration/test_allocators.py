"""Programs whose malloc is not glibc's."""
import pytest

from memrec_support import assert_leaks


def test_jemalloc_program_is_recorded_exactly(build, record, run_plain, only_dump, leaks_by_function):
    # given jemalloc_prog, linked with Debian's libjemalloc, which checks that
    # its malloc is jemalloc's and leaks 4 x 4321 from jemalloc_leak
    if not (build.programs_dir / "jemalloc_prog").exists():
        pytest.skip("jemalloc_prog was not built (libjemalloc-dev missing)")
    # when it runs under the preload
    run = record("jemalloc_prog")
    # then its malloc is still jemalloc's (the preload forwards to it)
    plain = run_plain("jemalloc_prog")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (
        0, "jemalloc_prog: malloc is jemalloc\n")
    # and its leak is recorded exactly
    dump = only_dump(run)
    assert dump["clean_end"] is True
    assert_leaks(leaks_by_function(dump), {"jemalloc_leak": (4, 4 * 4321)})
    assert dump["counts"]["alloc"] >= 1005
