"""memrec export --format heaptrack read by Debian's heaptrack_print (1.4):
it reports the same allocation calls, peak and leaked totals as memrec report,
whether the file is plain or, as OUT's name says, zstd or gzip (heaptrack_print
picks its decompressor by the name and reads a mismatch as 0 allocations)."""
import gzip
import re
import shutil
import subprocess

import pytest

import memrec_support as support

pytestmark = pytest.mark.skipif(shutil.which("heaptrack_print") is None, reason="heaptrack is not installed")


def heaptrack_format(n: int) -> str:
    """A byte count as heaptrack_print prints it: divided by 1000 while above
    1000 (so 1000000 is 1000.00K), 2 decimals, plain bytes unscaled."""
    units = ["B", "K", "M", "G", "T", "P"]
    value, unit = float(n), 0
    while value > 1000 and unit + 1 < len(units):
        value /= 1000
        unit += 1
    return f"{n}B" if unit == 0 else f"{value:.2f}{units[unit]}"


# What each output name's file starts with: heaptrack's version line, or the
# zstd and gzip magic numbers.
MAGIC = {".heaptrack": b"v ", ".heaptrack.zst": b"\x28\xb5\x2f\xfd", ".heaptrack.gz": b"\x1f\x8b"}


def unpack(path) -> bytes:
    """The bytes of a plain, .zst or .gz file, decompressed by zstd's own command and Python's gzip."""
    if path.name.endswith(".zst"):
        return subprocess.run(["zstd", "-dc", str(path)], capture_output=True, timeout=support.TIMEOUT_S,
                              check=True).stdout
    return gzip.decompress(path.read_bytes()) if path.name.endswith(".gz") else path.read_bytes()


@pytest.mark.parametrize("suffix", list(MAGIC))
@pytest.mark.parametrize("program", ["peak_known", "leak_three", "temporaries", "cpp_new"])
def test_heaptrack_print_reads_the_same_totals(build, record, program, suffix, tmp_path):
    # given a program recorded by memrec and exported in heaptrack's format, compressed as the name says
    run = record(program)
    assert run.returncode == 0, run.describe()
    rep = support.only_process(support.report(build, run.dats[0]))
    out = tmp_path / f"{program}{suffix}"
    export = support.memrec_raw(build, ["export", run.dats[0], "--format", "heaptrack", "-o", out])
    assert export.returncode == 0, export.describe()
    assert out.read_bytes().startswith(MAGIC[suffix])
    # when heaptrack_print reads it
    text = subprocess.run(["heaptrack_print", str(out)], capture_output=True, text=True, timeout=support.TIMEOUT_S,
                          check=True).stdout
    totals = {key: re.search(pattern, text, re.MULTILINE).group(1)
              for key, pattern in {"calls": r"^calls to allocation functions: (\d+)",
                                   "peak": r"^peak heap memory consumption: (\S+)",
                                   "leaked": r"^total memory leaked: (\S+)"}.items()}
    # then its totals are the report's (heaptrack counts what the runtime kept as leaked)
    assert int(totals["calls"]) == rep["allocations"]
    assert totals["peak"] == heaptrack_format(rep["peak"]["bytes"])
    assert totals["leaked"] == heaptrack_format(rep["leaked"]["bytes"] + rep["runtime_retained"]["bytes"])


def test_heaptrack_names_the_leaking_function(build, record, tmp_path):
    run = record("leak_three")
    out = tmp_path / "leak_three.heaptrack"
    assert support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", "-o", out]).returncode == 0
    text = subprocess.run(["heaptrack_print", "--print-leaks", "1", str(out)], capture_output=True, text=True,
                          timeout=support.TIMEOUT_S, check=True).stdout
    assert re.search(r"^12.73K leaked over 3 calls from\nleak_here$", text, re.MULTILINE), text


def test_compressed_heaptrack_files_hold_the_plain_files_bytes(build, record, tmp_path):
    # given one dump exported three times, plain, .zst and .gz
    run = record("cpp_new")
    outs = [tmp_path / f"cpp_new{suffix}" for suffix in MAGIC]
    for out in outs:
        export = support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", "-o", out])
        assert export.returncode == 0, export.describe()
    # then each decompresses to exactly the plain file, and the compressed ones are smaller
    plain = outs[0].read_bytes()
    assert plain.startswith(b"v 10400 3\n")
    assert [unpack(out) for out in outs] == [plain] * 3
    assert all(out.stat().st_size < len(plain) for out in outs[1:])


def test_heaptrack_on_stdout_is_plain_text(build, record):
    # stdout has no name to go by, so nothing is compressed
    run = record("leak_three")
    export = support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", "-o", "-"])
    assert export.returncode == 0 and export.stdout.startswith("v 10400 3\n"), export.describe()


def test_a_compressed_export_to_a_full_disk_fails_with_a_message(build, record, tmp_path):
    # given an output named .zst that is /dev/full, which takes the open and refuses every write
    run = record("cpp_new")
    out = tmp_path / "full.heaptrack.zst"
    out.symlink_to("/dev/full")
    # when the heaptrack file is written through zstd to it
    export = support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", "-o", out])
    # then the export fails as bad output (exit 2), naming the file, and leaves the device alone
    assert export.returncode == 2, export.describe()
    assert f"memrec: export: cannot write {out}: check the directory exists" in export.stderr
    assert out.is_symlink()


def test_heaptrack_takes_one_dump_and_no_range(build, record):
    run = record("leak_three")
    for args in (["--from", "1ms"], [run.dats[0]]):
        bad = support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", *args])
        assert bad.returncode == 1, bad.describe()


def test_heaptrack_keeps_its_event_list_in_the_spill_dir(build, record, tmp_path):
    """Every event waits for the file in a spill column (8 bytes each): a
    directory that cannot hold it is a warning, and the file is the same."""
    run = record("leak_three")
    here, there = tmp_path / "a.heaptrack", tmp_path / "b.heaptrack"
    assert support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", "-o", here]).returncode == 0
    missing = tmp_path / "missing"
    moved = support.memrec_raw(build, ["export", run.dats[0], "-f", "heaptrack", "-o", there, "--spill-dir", missing])
    assert moved.returncode == 0, moved.describe()
    assert f"memrec: cannot keep allocation tables in {missing}" in moved.stderr
    assert here.read_bytes() == there.read_bytes()
