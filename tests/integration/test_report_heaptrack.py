"""memrec report against heaptrack (Debian's heaptrack 1.4) on deterministic C
programs: allocation calls, peak and leaked totals agree, up to the
differences each assertion names."""
import re
import shutil
import subprocess

import pytest

import memrec_support as support

pytestmark = pytest.mark.skipif(shutil.which("heaptrack") is None, reason="heaptrack is not installed")

# libheaptrack_preload.so is C++: loading it makes libstdc++ allocate its
# exception emergency pool (72704 bytes with glibc 2.36 / GCC 12) with malloc
# before main, and heaptrack records it. Under memrec no libstdc++ is loaded
# into a C program, so heaptrack counts one allocation more, and that block is
# live at every moment, so its peak is higher by the pool's size. heaptrack
# frees the pool at exit (__gnu_cxx::__freeres), so leaks are not affected.
EMERGENCY_POOL_BYTES = 72704


def heaptrack_format(n: int) -> str:
    """A byte count as heaptrack_print prints it: 1000-based units, 2 decimals."""
    if n < 1000:
        return f"{n}B"
    value = float(n)
    for unit in ("K", "M", "G", "T"):
        value /= 1000
        if value < 1000:
            return f"{value:.2f}{unit}"
    return f"{value:.2f}P"


def heaptrack_totals(build, program, tmp_path) -> dict[str, str]:
    out = tmp_path / "heaptrack"
    argv = ["heaptrack", "-o", str(out), str(build.program(program))]
    run = support.finish(support.start(argv, support.clean_env(), cwd=tmp_path), argv, support.TIMEOUT_S)
    assert run.returncode == 0, run.describe()
    text = subprocess.run(["heaptrack_print", f"{out}.zst"], capture_output=True, text=True,
                          timeout=support.TIMEOUT_S, check=True).stdout
    totals = {}
    for key, pattern in {"calls": r"^calls to allocation functions: (\d+)",
                         "peak": r"^peak heap memory consumption: (\S+)",
                         "leaked": r"^total memory leaked: (\S+)"}.items():
        match = re.search(pattern, text, re.MULTILINE)
        assert match, f"heaptrack_print printed no {key}:\n{text}"
        totals[key] = match.group(1)
    return totals


@pytest.mark.parametrize("program", ["peak_known", "leak_three", "temporaries"])
def test_totals_match_heaptrack(build, record, program, tmp_path):
    # given a deterministic C program recorded by both
    theirs = heaptrack_totals(build, program, tmp_path)
    run = record(program)
    assert run.returncode == 0, run.describe()
    ours = support.only_process(support.report(build, run.dats[0]))
    # then the allocation calls agree but for heaptrack's own libstdc++ pool
    assert int(theirs["calls"]) == ours["allocations"] + 1
    # and so does the peak, with the pool added to ours
    assert theirs["peak"] == heaptrack_format(ours["peak"]["bytes"] + EMERGENCY_POOL_BYTES)
    # and the leaked total exactly
    assert theirs["leaked"] == heaptrack_format(ours["leaked"]["bytes"])
