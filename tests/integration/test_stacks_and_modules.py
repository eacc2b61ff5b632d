"""Backtraces: the depth limit, and code in a library that was dlclose()d."""
import os

from memrec_support import assert_leaks, function_of, innermost_test_function


def leaks_from(build, dump, function):
    return [leak for leak in dump["leaks"] if innermost_test_function(build, leak) == function]


def test_max_depth_cuts_deep_stacks_to_exactly_that_many_frames(build, record, only_dump):
    # given deep_stack, which recurses 300 levels and then leaks 5555 bytes
    # when it runs with MEMREC_MAX_DEPTH=16
    run = record("deep_stack", env={"MEMREC_MAX_DEPTH": "16"})
    assert run.returncode == 0, run.describe()
    dump = only_dump(run)
    # then the leak's stack is marked cut and has the 16 innermost frames
    leaks = leaks_from(build, dump, "leak_deep")
    assert len(leaks) == 1
    leak = leaks[0]
    assert (leak["count"], leak["bytes"]) == (1, 5555)
    assert leak["truncated"] is True
    assert [function_of(frame) for frame in leak["frames"]] == ["leak_deep"] + ["recurse"] * 15
    assert dump["header"]["options"].get("max_depth") == "16"
    assert dump["counters"]["truncated_stacks"] >= 1


def test_default_max_depth_is_128(build, record, only_dump):
    # given deep_stack recursing 300 levels
    # when it runs without MEMREC_MAX_DEPTH
    run = record("deep_stack")
    dump = only_dump(run)
    # then the leak's stack is cut at 128 frames
    (leak,) = leaks_from(build, dump, "leak_deep")
    assert leak["truncated"] is True
    assert len(leak["frames"]) == 128
    assert [function_of(frame) for frame in leak["frames"]] == ["leak_deep"] + ["recurse"] * 127


def test_shallow_stack_is_whole_down_to_main(build, record, only_dump):
    # given deep_stack recursing only 5 levels
    # when it runs under the preload
    run = record("deep_stack", "5")
    dump = only_dump(run)
    # then the leak's stack is not cut and goes from leak_deep down to main
    (leak,) = leaks_from(build, dump, "leak_deep")
    assert leak["truncated"] is False
    names = [function_of(frame) for frame in leak["frames"]]
    assert names[:8] == ["leak_deep"] + ["recurse"] * 6 + ["main"]


def test_leaks_from_a_dlclosed_library_are_named_in_that_library(build, record, only_dump, leaks_by_function):
    # given dlopen_lib, which twice dlopen()s libtest_alloc.so (whose
    # constructor leaks 4444), calls lib_leak (leaks 3333) and dlclose()s it
    # when it runs under the preload
    run = record("dlopen_lib")
    assert run.returncode == 0, run.describe()
    dump = only_dump(run)
    # then both leaks of each load are named, although the library is gone
    # (glibc 2.36's dlopen keeps a block of ld.so's per call after dlclose,
    # malloc()ed in dl_open_worker_begin: it counts for load_call_close)
    leaks = leaks_by_function(dump)
    assert_leaks(leaks, {"lib_leak": (2, 6666), "lib_ctor_leak": (2, 8888)}, ignore=("load_call_close",))
    for leak in leaks_from(build, dump, "load_call_close"):
        assert "ld-linux" in os.path.basename(leak["frames"][0]["module"] or ""), leak
    library = os.path.realpath(build.programs_dir / "libtest_alloc.so")
    for leak in leaks_from(build, dump, "lib_leak") + leaks_from(build, dump, "lib_ctor_leak"):
        in_library = [f for f in leak["frames"] if f["module"] and os.path.realpath(f["module"]) == library]
        assert in_library, leak
    # and every load of the library is in the module list, ended by an unload
    loads = [m for m in dump["modules"] if m["path"] and os.path.realpath(m["path"]) == library]
    assert 1 <= len(loads) <= 2, dump["modules"]
    for module in loads:
        assert module["unload_gen"] is not None and module["unload_gen"] > module["load_gen"], module
    assert "after_dlclose" not in leaks
