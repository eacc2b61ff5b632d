"""Single-threaded heap programs: every allocation function, exact leaks by
function, and the program behaving the same with and without the preload."""
import os
import subprocess

import pytest

import memrec_support as support
from memrec_support import assert_consistent, assert_leaks, innermost_test_function


def assert_clean_dump(run, dump, program_path):
    assert dump["clean_end"] is True
    assert dump["truncated_at"] is None
    assert dump["header"]["pid"] == run.pid
    assert dump["header"]["ppid"] == os.getpid()
    assert os.path.realpath(dump["header"]["exe"]) == os.path.realpath(program_path)
    assert dump["header"]["cmdline"] == run.argv
    assert_consistent(dump)


def recorded_as_without(build, record, run_plain, only_dump, program, stdout):
    """Records `program`, checks that it ran as without the preload (exit 0,
    `stdout`) and that its one dump is complete; returns the run and the dump."""
    run = record(program)
    plain = run_plain(program)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (0, stdout)
    dump = only_dump(run)
    assert_clean_dump(run, dump, build.program(program))
    return run, dump


def test_leak_three_leaks_exactly_three_blocks_from_leak_here(build, record, run_plain, only_dump,
                                                              leaks_by_function):
    # given leak_three, which leaks 3 x 4242 bytes from leak_here and frees the rest
    # when it runs under the preload
    run = record("leak_three")
    # then it behaves as without the preload
    plain = run_plain("leak_three")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (0, "leak_three: leaked 3 x 4242\n")
    assert run.stderr == ""
    # and its dump is complete and holds exactly that leak
    dump = only_dump(run)
    assert_clean_dump(run, dump, build.program("leak_three"))
    assert_leaks(leaks_by_function(dump), {"leak_here": (3, 3 * 4242)})
    assert dump["counts"]["alloc"] >= 104  # 3 leaked + 100 churned + malloc(0)
    assert dump["counts"]["free"] >= 101
    assert dump["counts"]["alloc_by_function"]["malloc"] >= 104
    assert dump["header"]["options"].get("max_depth") == "128"
    assert dump["counters"]["events"] >= 205
    assert dump["duration_ns"] > 0


def test_realloc_in_every_case_leaves_exactly_the_final_blocks(build, record, run_plain, only_dump,
                                                               leaks_by_function):
    # given realloc_chain: a buffer grown through six reallocs (leaked at 50000),
    # realloc(NULL, 777) leaked, realloc(p, 0), a failing realloc whose old
    # block stays live (1212) and failing malloc/calloc/reallocarray
    # when it runs under the preload
    run = record("realloc_chain")
    plain = run_plain("realloc_chain")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout)
    assert run.returncode == 0
    dump = only_dump(run)
    assert_clean_dump(run, dump, build.program("realloc_chain"))
    # then only the final blocks leak, with their final sizes; realloc(p, 0)
    # and the failed calls leave nothing behind
    assert_leaks(leaks_by_function(dump), {
        "grow_buffer": (1, 50000),
        "realloc_null": (1, 777),
        "realloc_fail": (1, 1212),
    })
    assert dump["counts"]["realloc"] == 6
    assert dump["counts"]["alloc_by_function"]["realloc"] >= 1


def test_every_aligned_allocation_function_is_recorded_and_stays_aligned(build, record, run_plain,
                                                                         only_dump, leaks_by_function):
    # given aligned: memalign, aligned_alloc, posix_memalign, valloc, pvalloc,
    # calloc and reallocarray, each called twice from its own function (one
    # block freed, one leaked), and a posix_memalign with a bad alignment
    # when it runs under the preload
    run = record("aligned")
    # then every block is still aligned
    plain = run_plain("aligned")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout) == (0, "aligned: all aligned\n")
    # and each function's leak is there with its requested size
    dump = only_dump(run)
    assert_clean_dump(run, dump, build.program("aligned"))
    assert_leaks(leaks_by_function(dump), {
        "leak_memalign": (1, 1000),
        "leak_aligned_alloc": (1, 2048),
        "leak_posix_memalign": (1, 3000),
        "leak_valloc": (1, 4000),
        "leak_pvalloc": (1, 5000),
        "leak_calloc": (1, 6000),
        "leak_reallocarray": (1, 7000),
    })
    # and each call is counted under its own function; the failed one is not
    by_function = dump["counts"]["alloc_by_function"]
    for name in ("memalign", "aligned_alloc", "posix_memalign", "valloc", "pvalloc"):
        assert by_function[name] == 2, name
    assert by_function["calloc"] >= 2
    assert by_function["reallocarray"] >= 1
    assert dump["counts"]["realloc"] >= 1  # reallocarray(p, 7, 1000)


def test_cpp_new_in_every_form_and_exceptions_leak_only_the_known_objects(build, record, run_plain,
                                                                           only_dump, leaks_by_function):
    # given cpp_new: new, new[], nothrow, aligned new, sized delete, 1000
    # thrown exceptions, and leaks of 5 x new char[777], 2 x an alignas(64)
    # type of 640 bytes and 3 x nothrow new char[333]
    # when it runs under the preload
    run = record("cpp_new")
    plain = run_plain("cpp_new")
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout)
    assert run.stdout == "cpp_new: caught 1000 exceptions\n"
    dump = only_dump(run)
    assert_clean_dump(run, dump, build.program("cpp_new"))
    # then exactly those objects leak (libstdc++'s own pool is not ours)
    assert_leaks(leaks_by_function(dump), {
        "leak_widgets": (5, 5 * 777),
        "leak_big_aligned": (2, 2 * 640),
        "leak_nothrow": (3, 3 * 333),
    })
    # and the program's function is the innermost frame of the leaks: neither
    # libstdc++'s operator new nor the preload's is recorded
    widget_leaks = [leak for leak in dump["leaks"] if innermost_test_function(build, leak) == "leak_widgets"]
    assert widget_leaks
    for leak in widget_leaks:
        assert leak["frames"][0]["module"] == str(build.program("cpp_new"))
    assert dump["counts"]["alloc"] >= 2000  # two blocks per thrown exception at least


@pytest.mark.parametrize("program, allocator", [("cpp_new_mimalloc", "libmimalloc"),
                                                 ("cpp_new_jemalloc", "libjemalloc"),
                                                 ("cpp_new_tcmalloc", "libtcmalloc_minimal")])
def test_cpp_new_of_a_program_whose_allocator_replaces_operator_new_is_recorded(build, record, run_plain, only_dump,
                                                                                leaks_by_function, program,
                                                                                allocator):
    # given cpp_new linked against mimalloc, jemalloc or tcmalloc, whose
    # operator new and delete replace libstdc++'s: mimalloc's and tcmalloc's
    # never call malloc or free, and jemalloc's mostly do not (jemalloc's and
    # tcmalloc's also throw std::bad_alloc through the preload's operator new;
    # mimalloc's would abort, so that variant skips the throwing request)
    if not (build.programs_dir / program).exists():
        pytest.skip(f"{program} was not built (the -dev package of {allocator} is missing: scripts/setup installs it)")
    needed = subprocess.run(["readelf", "-d", "-W", str(build.program(program))], capture_output=True,
                            text=True, check=True).stdout
    assert allocator in needed
    # when it runs under the preload
    run = record(program)
    plain = run_plain(program)
    assert (run.returncode, run.stdout) == (plain.returncode, plain.stdout)
    assert run.stdout == "cpp_new: caught 1000 exceptions\n"
    assert run.stderr == ""
    dump = only_dump(run)
    assert_clean_dump(run, dump, build.program(program))
    # then the same objects leak as with libstdc++'s operator new
    assert_leaks(leaks_by_function(dump), {
        "leak_widgets": (5, 5 * 777),
        "leak_big_aligned": (2, 2 * 640),
        "leak_nothrow": (3, 3 * 333),
    })
    # and every delete found its new: no free of an unknown block
    assert dump["heap"]["unmatched_frees"] == 0
    # and none went through libstdc++'s operator new
    for leak in dump["leaks"]:
        assert "libstdc++" not in os.path.basename(leak["frames"][0]["module"] or "")
    if program == "cpp_new_mimalloc":
        # and mimalloc's reach nothing of ours: the preload's own operator new
        # recorded them, from the caller in the program on
        for leak in dump["leaks"]:
            assert os.path.realpath(leak["frames"][0]["module"]) == os.path.realpath(build.program(program))
    assert dump["counts"]["alloc_by_function"]["aligned_alloc"] == 6  # 2 leaked Big, every_form_freed's 4
    if program == "cpp_new_jemalloc":
        # and, built from the same source as cpp_new, it made exactly cpp_new's calls
        libstdcxx = only_dump(record("cpp_new"))
        assert (dump["counts"]["alloc"], dump["counts"]["free"]) == (libstdcxx["counts"]["alloc"],
                                                                     libstdcxx["counts"]["free"])
    assert dump["counts"]["alloc"] >= 2000


@pytest.mark.parametrize("program", ["cpp_new", "cpp_new_mimalloc"])
def test_operator_new_tried_before_recording_starts_is_recorded_once(build, record, only_dump, leaks_by_function,
                                                                     program):
    # given cpp_new started with recording off, whose first new and delete
    # make the preload try each form of the operators, and which then turns
    # recording on with SIGUSR1
    if not (build.programs_dir / program).exists():
        pytest.skip(f"{program} was not built (libmimalloc-dev missing: scripts/setup installs it)")
    run = record(program, "raise", env={"MEMREC_START_DISABLED": "1"})
    assert (run.returncode, run.stdout) == (0, "cpp_new: caught 1000 exceptions\n")
    # then every allocation is recorded once: libstdc++'s operators through
    # malloc, mimalloc's by the preload, neither twice
    dump = only_dump(run)
    assert_leaks(leaks_by_function(dump), {
        "leak_widgets": (5, 5 * 777),
        "leak_big_aligned": (2, 2 * 640),
        "leak_nothrow": (3, 3 * 333),
    })
    assert dump["counts"]["alloc_by_function"]["aligned_alloc"] == 6
    assert dump["counts"]["alloc"] >= 2000


def test_a_cpp_library_dlopened_locally_by_a_c_program_has_its_new_recorded(build, record, run_plain, only_dump,
                                                                            leaks_by_function):
    # given dlopen_cxx, a C program that twice dlopen()s a C++ library with
    # RTLD_LOCAL (its libstdc++ comes local to it, so its operator new is
    # found through the preload's), which leaks 2 x new char[2222] each time
    # when it runs under the preload
    # then it runs as without the preload, the library loaded, closed and loaded again
    run, dump = recorded_as_without(build, record, run_plain, only_dump, "dlopen_cxx",
                                    "dlopen_cxx: loaded, called and closed twice\n")
    assert run.stderr == ""
    # and exactly the library's leaks are recorded, every delete matched
    # (what dlopen allocates, libstdc++'s emergency pool among it, is kept:
    # libstdc++ is never unloaded)
    assert_leaks(leaks_by_function(dump), {"cxx_lib_leak": (4, 4 * 2222)}, ignore=("load_call_close",))
    assert dump["heap"]["unmatched_frees"] == 0
    assert dump["counts"]["alloc"] >= 2 * (2 + 100)  # the leaks and the strings


def test_an_allocator_a_closed_library_brought_stays_loaded_while_new_forwards_to_it(build, record, run_plain,
                                                                                     only_dump, leaks_by_function):
    # given dlclose_allocator, a C program that dlopen()s with RTLD_GLOBAL a
    # C++ library linked against mimalloc (so the preload's operator new
    # forwards to mimalloc's), calls it and dlclose()s it, which unloads
    # mimalloc without the preload, then does the same with libtest_cxx.so,
    # whose operator new is the preload's too
    if not (build.programs_dir / "dlclose_allocator").exists():
        pytest.skip("dlclose_allocator was not built (libmimalloc-dev missing: scripts/setup installs it)")
    # when it runs under the preload
    # then it runs as without it: the preload kept mimalloc loaded, so the
    # second library's new did not jump into an unmapped mimalloc
    run, dump = recorded_as_without(build, record, run_plain, only_dump, "dlclose_allocator",
                                    "dlclose_allocator: both libraries loaded, called and closed\n")
    assert run.stderr == ""
    # and both libraries' leaks are recorded, every delete matched
    assert_leaks(leaks_by_function(dump), {"cxx_lib_leak": (4, 4 * 2222)}, ignore=("load_call_close",))
    assert dump["heap"]["unmatched_frees"] == 0


def test_allocations_before_the_recorders_constructor_are_recorded(build, record, run_plain, only_dump,
                                                                   leaks_by_function):
    # given early_alloc, linked with a library whose constructor leaks 1357
    # bytes before the loader runs libmemrec.so's constructor, and which leaks
    # 2468 from late_leak in main
    # when it runs under the preload
    run, dump = recorded_as_without(build, record, run_plain, only_dump, "early_alloc",
                                    "early_alloc: constructor block allocated\n")
    # then both leaks are there, the early one named in its library
    assert_leaks(leaks_by_function(dump), {"early_ctor_leak": (1, 1357), "late_leak": (1, 2468)})


def test_a_dlerror_message_pending_at_the_first_new_is_freed_in_the_dump(build, record, run_plain, only_dump,
                                                                         leaks_by_function):
    # given dlerror_pending, whose failed dlsym leaves glibc's dlerror message
    # pending at its first operator new, where the preload's own dlsym makes
    # glibc free it (mariadbd's start), and which then reuses those sizes
    run, dump = recorded_as_without(build, record, run_plain, only_dump, "dlerror_pending", "42\n")
    # then the message and its holder are freed in the dump as in the
    # program: nothing of the lookup stays live, no block is replaced, no free is unknown
    rep = support.only_process(support.report(build, *run.dats))
    assert (rep["replaced_blocks"], rep["unmatched_frees"]) == (0, 0)
    # (main's printf leaves stdout's buffer, which stdio keeps)
    assert_leaks(leaks_by_function(dump), {"leak_one": (1, 4)}, ignore=("main",))
