"""Hostile input to the `memrec` command: files that are empty, zero-filled,
foreign, newer, damaged, cut, crafted to break limits, directories or missing.

Given such a file, when `memrec info` or `memrec report` (text and --json)
reads it, then it either reads what is data (a dump cut inside a frame or
ending in zeros is a crashed recording: FORMAT.md, "Frames") and exits 0, or
prints exactly one line `memrec: FILE: ...` naming the file and exits 2.
Never a crash, an internal error, sanitizer output or a hang: every run has
a timeout.

Crafted frames are built here byte by byte (FORMAT.md, "Records"), inside
zstd frames of raw blocks (RFC 8878, 3.1.1), so no zstd module is needed.
"""
from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Callable

import pytest

import memrec_support as support

# Seconds one `memrec` run may take on these small inputs.
TIMEOUT_S = min(support.TIMEOUT_S, 30.0)

# Every subcommand that reads dumps, as argv after `memrec`: each hostile case
# runs under each of them.
READERS = [
    pytest.param(["info"], id="info"),
    pytest.param(["info", "--json"], id="info-json"),
    pytest.param(["report"], id="report"),
    pytest.param(["report", "--json"], id="report-json"),
]

EXIT_OK, EXIT_BAD_INPUT = 0, 2

# --- bytes of the format (FORMAT.md) ---------------------------------------


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low7, value = value & 0x7F, value >> 7
        out.append(low7 | (0x80 if value else 0))
        if not value:
            return bytes(out)


def zz(value: int) -> bytes:
    """A signed delta: zigzag of the wrapping 64-bit value."""
    value &= (1 << 64) - 1
    signed = value - (1 << 64) if value >> 63 else value
    return varint(((signed << 1) ^ (signed >> 63)) & ((1 << 64) - 1))


def string(data: bytes) -> bytes:
    return varint(len(data)) + data


def zstd_raw(payload: bytes) -> bytes:
    """A zstd frame holding `payload` in raw blocks: magic, a single-segment
    descriptor with an 8-byte content size, no checksum (RFC 8878, 3.1.1)."""
    out = bytearray(struct.pack("<IB", 0xFD2FB528, 0xE0) + struct.pack("<Q", len(payload)))
    blocks = [payload[i:i + 128 * 1024] for i in range(0, len(payload), 128 * 1024)] or [b""]
    for n, block in enumerate(blocks):
        last = 1 if n == len(blocks) - 1 else 0
        out += struct.pack("<I", last | (len(block) << 3))[:3] + block
    return bytes(out)


def frame(payload: bytes, decompressed: int | None = None) -> bytes:
    """An MRFZ envelope around zstd_raw(payload); `decompressed` overrides D."""
    z = zstd_raw(payload)
    return b"MRFZ" + struct.pack("<II", len(z), len(payload) if decompressed is None else decompressed) + z


def header(version: int = 1, body: bytes | None = None) -> bytes:
    if body is None:
        body = (varint(4242) + varint(1) + varint(1_700_000_000 * 10**9) + varint(10**9) + varint(4096) +
                string(b"/hostile/exe") + string(b"hostile\0") + varint(0))
    return b"MEMRECDT" + struct.pack("<HHI", version, 0, len(body)) + body


THREAD = b"\x01" + varint(7)
END = b"\x11" + zz(10)


def alloc(dt: int, daddr: int, size: int, dstack: int = 0) -> bytes:
    return b"\x20" + zz(dt) + zz(daddr) + varint(size) + zz(dstack)


# --- fixtures ----------------------------------------------------------------


@pytest.fixture(scope="module")
def real_dump(build, tmp_path_factory) -> bytes:
    """The bytes of a clean recording of leak_three: one or more frames, End."""
    run = support.record(build, "leak_three", tmp_path=tmp_path_factory.mktemp("hostile-real"))
    assert run.returncode == 0 and len(run.dats) == 1, run.describe()
    return run.dats[0].read_bytes()


def header_size(dump: bytes) -> int:
    return 16 + struct.unpack_from("<I", dump, 12)[0]


def frame_offsets(dump: bytes) -> list[int]:
    at, offsets = header_size(dump), []
    while at < len(dump):
        offsets.append(at)
        at += 12 + struct.unpack_from("<I", dump, at + 4)[0]
    return offsets


def run_memrec(build, argv: list[str], cwd: Path) -> support.Run:
    """`memrec ARGV` in `cwd`, failing the test past TIMEOUT_S."""
    full = [str(build.memrec), *argv]
    return support.finish(support.start(full, support.clean_env(), cwd=cwd), full, TIMEOUT_S)


def assert_no_crash(run: support.Run) -> None:
    assert run.returncode >= 0, f"killed by signal {-run.returncode}\n{run.describe()}"
    for sign in ("internal error", "Sanitizer", "runtime error", "terminate called", "Traceback"):
        assert sign not in run.stderr, run.describe()


def assert_rejected(run: support.Run, name: str, *phrases: str) -> None:
    """Exit 2 and exactly one stderr line, `memrec: NAME: ...` with `phrases`."""
    assert_no_crash(run)
    assert run.returncode == EXIT_BAD_INPUT, run.describe()
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line on stderr\n{run.describe()}"
    assert lines[0].startswith(f"memrec: {name}: "), run.describe()
    for phrase in phrases:
        assert phrase in lines[0], f"{phrase!r} missing\n{run.describe()}"


def assert_nothing_reported(run: support.Run, reader: list[str], name: str) -> None:
    """Nothing about the rejected file on stdout: no text at all, or (--json)
    a document that still parses and does not mention it."""
    if "--json" not in reader:
        assert run.stdout.strip() == "", run.describe()
    elif run.stdout.strip():
        try:
            document = json.loads(run.stdout)
        except ValueError:
            pytest.fail(f"stdout is not JSON\n{run.describe()}")
        assert name not in json.dumps(document), run.describe()


def read_as(build, reader: list[str], tmp_path: Path, data: bytes, name: str = "hostile.dat") -> support.Run:
    (tmp_path / name).write_bytes(data)
    return run_memrec(build, [*reader, name], tmp_path)


# --- files that are not dumps ---------------------------------------------------

NOT_DUMPS: dict[str, tuple[Callable[[], bytes], tuple[str, ...]]] = {
    "empty": (lambda: b"", ("empty",)),
    "zero-filled": (lambda: bytes(64 * 1024), ("not a memrec dump",)),
    "one zero byte": (lambda: b"\0", ("not a memrec dump",)),
    "text": (lambda: b"hello, this is not a dump\n" * 50, ("not a memrec dump",)),
    "wrong magic, right layout": (lambda: b"MEMRECDX" + header()[8:] + frame(THREAD + END), ("not a memrec dump",)),
    "half a magic": (lambda: b"MEMR", ("ends inside its file header",)),
    "cut inside the prefix": (lambda: header()[:13], ("ends inside its file header",)),
    "cut inside the body": (lambda: header()[:-3], ("ends inside its file header",)),
    "body length over 1 MiB": (lambda: b"MEMRECDT" + struct.pack("<HHI", 1, 0, (1 << 20) + 1) + bytes(64),
                               ("corrupt file header",)),
    "body length 4 GiB": (lambda: b"MEMRECDT" + struct.pack("<HHI", 1, 0, 0xFFFFFFFF), ("corrupt file header",)),
    "version 0": (lambda: header(version=0) + frame(THREAD + END), ("corrupt file header",)),
    "newer version": (lambda: header(version=10) + frame(THREAD + END), ("newer than this memrec", "upgrade")),
    "version 65535": (lambda: header(version=0xFFFF), ("newer than this memrec",)),
    "body varint runs off": (lambda: header(body=b"\xff\xff"), ("corrupt file header",)),
    "option count over the body": (lambda: header(body=varint(1) * 5 + string(b"") * 2 + varint(1 << 40)),
                                   ("corrupt file header",)),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(NOT_DUMPS))
def test_a_file_that_is_not_a_dump_is_named_and_exits_2(build, memrec_cli, tmp_path, reader, case):
    make, phrases = NOT_DUMPS[case]
    run = read_as(build, reader, tmp_path, make())
    assert_rejected(run, "hostile.dat", *phrases)
    assert_nothing_reported(run, reader, "hostile.dat")


@pytest.mark.parametrize("reader", READERS)
def test_a_newer_version_of_a_real_dump_asks_to_upgrade(build, memrec_cli, tmp_path, reader, real_dump):
    newer = real_dump[:8] + struct.pack("<H", 10) + real_dump[10:]
    assert_rejected(read_as(build, reader, tmp_path, newer), "hostile.dat", "format v10 is newer", "upgrade")


@pytest.mark.parametrize("reader", READERS)
def test_a_directory_is_named_and_exits_2(build, memrec_cli, tmp_path, reader):
    (tmp_path / "dumps.dat").mkdir()
    assert_rejected(run_memrec(build, [*reader, "dumps.dat"], tmp_path), "dumps.dat", "directory")


@pytest.mark.parametrize("reader", READERS)
def test_a_missing_file_is_named_and_exits_2(build, memrec_cli, tmp_path, reader):
    assert_rejected(run_memrec(build, [*reader, "no/such.dat"], tmp_path), "no/such.dat", "no such file")


@pytest.mark.parametrize("reader", READERS)
def test_dev_null_is_an_empty_input(build, memrec_cli, tmp_path, reader):
    assert_rejected(run_memrec(build, [*reader, os.devnull], tmp_path), os.devnull, "empty")


@pytest.mark.parametrize("reader", READERS)
def test_an_executable_is_not_a_dump(build, memrec_cli, tmp_path, reader):
    path = str(build.memrec)
    assert_rejected(run_memrec(build, [*reader, path], tmp_path), path, "not a memrec dump")


# --- damaged real dumps -----------------------------------------------------------


@pytest.mark.parametrize("reader", READERS)
def test_a_flipped_byte_in_a_frame_is_corrupt_at_its_offset(build, memrec_cli, tmp_path, reader, real_dump):
    first = frame_offsets(real_dump)[0]
    for where in (first + 12 + 20, len(real_dump) - 2):  # zstd data; its checksum
        damaged = bytearray(real_dump)
        damaged[where] ^= 0x5A
        run = read_as(build, reader, tmp_path, bytes(damaged))
        offset = max(o for o in frame_offsets(real_dump) if o <= where)
        assert_rejected(run, "hostile.dat", "corrupt frame", f"offset {offset}")


@pytest.mark.parametrize("reader", READERS)
def test_a_damaged_envelope_is_corrupt(build, memrec_cli, tmp_path, reader, real_dump):
    at = frame_offsets(real_dump)[0]
    bad_tag = real_dump[:at] + b"MRFX" + real_dump[at + 4:]
    assert_rejected(read_as(build, reader, tmp_path, bad_tag), "hostile.dat", "no MRFZ tag", f"offset {at}")
    for field in (4, 8):  # compressed size, decompressed size
        huge = bytearray(real_dump)
        struct.pack_into("<I", huge, at + field, 0x7FFFFFFF)
        assert_rejected(read_as(build, reader, tmp_path, bytes(huge)), "hostile.dat", "over the", "limit")
    wrong_size = bytearray(real_dump)
    struct.pack_into("<I", wrong_size, at + 8, struct.unpack_from("<I", real_dump, at + 8)[0] + 1)
    assert_rejected(read_as(build, reader, tmp_path, bytes(wrong_size)), "hostile.dat", "corrupt frame")


@pytest.mark.parametrize("reader", READERS)
def test_bytes_after_the_clean_end_are_corrupt(build, memrec_cli, tmp_path, reader, real_dump):
    run = read_as(build, reader, tmp_path, real_dump + b"trailing garbage")
    assert_rejected(run, "hostile.dat", "corrupt frame", f"offset {len(real_dump)}")


def assert_read_cut(build, reader: list[str], tmp_path: Path, data: bytes, truncated_at: int | None) -> None:
    """`reader` exits 0 on `data`; `memrec info --json` says where it was cut."""
    run = read_as(build, reader, tmp_path, data)
    assert_no_crash(run)
    assert run.returncode == EXIT_OK, run.describe()
    info = json.loads(read_as(build, ["info", "--json"], tmp_path, data).stdout)
    assert info["clean_end"] is False
    assert info["truncated_at"] == truncated_at


@pytest.mark.parametrize("reader", READERS)
def test_a_dump_cut_anywhere_in_its_frames_reads_up_to_the_cut(build, memrec_cli, tmp_path, reader, real_dump):
    """FORMAT.md: a file cut anywhere (SIGKILL, a full disk) reads up to its
    last complete frame. Cut at the header's end, inside the envelope, inside
    the zstd data, and one byte short of the end."""
    first = header_size(real_dump)
    last = frame_offsets(real_dump)[-1]
    assert_read_cut(build, reader, tmp_path, real_dump[:first], None)
    for cut in (last + 3, last + 12, (last + len(real_dump)) // 2, len(real_dump) - 1):
        assert_read_cut(build, reader, tmp_path, real_dump[:cut], last)


@pytest.mark.parametrize("reader", READERS)
def test_a_zero_tail_reads_as_a_cut(build, memrec_cli, tmp_path, reader, real_dump):
    """Power loss leaves a file extended with zeros: truncation, not corruption."""
    last = frame_offsets(real_dump)[-1]
    # last + 4: "MRFZ", then sizes of 0 and 0, as any cut inside the sizes
    # after a zero byte of them makes (a frame of 1,280 bytes cut at +5)
    for zeros_from in (last, last + 4, last + 5, last + 12 + 4):
        data = real_dump[:zeros_from] + bytes(len(real_dump) - zeros_from + 4096)
        assert_read_cut(build, reader, tmp_path, data, last)


@pytest.mark.parametrize("reader", READERS)
def test_one_bad_file_among_good_ones_is_named_and_exits_2(build, memrec_cli, tmp_path, reader, real_dump):
    (tmp_path / "good.dat").write_bytes(real_dump)
    (tmp_path / "bad.dat").write_bytes(b"MEMRECDT" + bytes(8))
    run = run_memrec(build, [*reader, "good.dat", "bad.dat", "good.dat"], tmp_path)
    assert_rejected(run, "bad.dat")


# --- crafted frames: the decoder's limits -------------------------------------------

CORRUPT_FRAMES: dict[str, tuple[bytes, str]] = {
    "unknown tag": (THREAD + b"\x7f" + END, "unknown record tag"),
    "alloc tag with an unknown function": (THREAD + b"\x2f" + bytes(4), "unknown record tag"),
    "event before any Thread": (alloc(1, 0x1000, 8) + THREAD + END, "before any Thread"),
    "record cut by the frame's end": (THREAD + b"\x20" + zz(1), "runs off the end"),
    "varint longer than 64 bits": (b"\x01" + b"\xff" * 10 + b"\x01", "longer than 64 bits"),
    "stack deeper than 1024": (b"\x08" + varint(1) + varint(1) + b"\0" + varint(1025) + b"\x02" * 1025,
                               "deeper than"),
    "stack depth past the frame": (b"\x08" + varint(1) + varint(1) + b"\0" + varint(1000), "runs off the end"),
    "stack id over 32 bits": (b"\x08" + varint(1 << 33) + varint(1) + b"\0" + varint(0), "over 32 bits"),
    "thread name over 64 KiB": (b"\x0c" + varint(7) + string(b"n" * (64 * 1024 + 1)), "longer than the format"),
    "string length past the frame": (b"\x0c" + varint(7) + varint(500) + b"abc", "runs off the end"),
    "module segment count past the frame": (b"\x09" + varint(1) + varint(1) + string(b"/lib") + varint(0) +
                                            string(b"") + varint(1 << 50), "exceeds the frame"),
    "counter count past the frame": (b"\x10" + varint(1 << 40) + varint(1) * 4, "exceeds the frame"),
    "realloc with an unknown function": (THREAD + b"\x04\x63" + zz(1) + zz(1) + varint(1) + zz(1) + varint(1) +
                                         zz(0), "unknown function"),
    "recording source 4": (b"\x0f" + zz(1) + bytes([1 | 4 << 1]), "a Recording record names an unknown source"),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(CORRUPT_FRAMES))
def test_a_frame_that_does_not_decode_is_corrupt_at_its_offset(build, memrec_cli, tmp_path, reader, case):
    payload, phrase = CORRUPT_FRAMES[case]
    good = frame(THREAD + alloc(5, 0x1000, 64))
    data = header() + good + frame(payload)
    run = read_as(build, reader, tmp_path, data)
    assert_rejected(run, "hostile.dat", "corrupt frame", f"offset {len(header()) + len(good)}", phrase)


@pytest.mark.parametrize("reader", READERS)
def test_a_frame_smaller_than_its_envelope_says_is_corrupt(build, memrec_cli, tmp_path, reader):
    data = header() + frame(THREAD + END, decompressed=100)
    assert_rejected(read_as(build, reader, tmp_path, data), "hostile.dat", "corrupt frame", "envelope says 100")


@pytest.mark.parametrize("reader", READERS)
def test_a_crafted_clean_dump_reads(build, memrec_cli, tmp_path, reader):
    """The builders above make dumps memrec accepts: the cases above fail for
    the reason they name, not because the crafting is wrong."""
    data = header() + frame(THREAD + b"\x0b" + varint(7) + zz(1) + string(b"main") + alloc(5, 0x1000, 64) + END)
    run = read_as(build, reader, tmp_path, data)
    assert_no_crash(run)
    assert run.returncode == EXIT_OK, run.describe()
    info = json.loads(read_as(build, ["info", "--json"], tmp_path, data).stdout)
    assert info["clean_end"] is True and info["counts"]["alloc"] == 1
    assert info["heap"]["live_bytes"] == 64


# --- version 2: a layout byte, then records or columns (FORMAT.md, "Columns") ---------


def columns(tags: bytes, dt: bytes = b"", addr_k: bytes = b"", addr: bytes = b"", size: bytes = b"",
            stack: bytes = b"", rest: bytes = b"", layout: int = 1) -> bytes:
    cols = (tags, dt, addr_k, addr, size, stack, rest)
    return bytes([layout]) + varint(len(cols)) + b"".join(varint(len(c)) for c in cols) + b"".join(cols)


# Thread 7; malloc(64) at 0x1000 (a miss: 0x1000 is 16-aligned, stored >> 4);
# its free (ring slot 0 of the recently allocated); End at +10 (whole in rest).
V2_THREAD_ALLOC_FREE_END = columns(tags=b"\x01\x20\x03\x11", dt=zz(5) + zz(1), addr_k=varint(0) + varint(2),
                                   addr=zz(0x1000 >> 4), size=varint(64), stack=zz(0),
                                   rest=varint(7) + varint(1) + zz(10))


# --- version 3: addresses coded by age (FORMAT.md, "Columns") -------------------------

# Thread 7; malloc(64) at 0x1000 (a miss); its free (the allocation 0 back);
# malloc(60) at 0x1000 again (the free 0 back in its size class: code 2);
# free of it (code 2); malloc(200) at 0x1000 (the free 0 back among all: code
# 3, its class differs); End at +10.
V3_REUSE = columns(tags=b"\x01\x20\x03\x20\x03\x20\x11", dt=zz(5) + zz(1) * 4,
                   addr_k=varint(0) + varint(2) * 3 + varint(3), addr=zz(0x1000 >> 4),
                   size=varint(64) + varint(60) + varint(200), stack=zz(0) * 3,
                   rest=varint(7) + varint(1) + zz(10), layout=2)


# --- version 4: an allocation's miss is a delta from the carve point -----------------

# Thread 7; malloc(64) at 0x1000 (a miss from `previous`, 0; the carve point
# is then 0x1000 + 80); malloc(40) at 0x1050 (delta 0 from it; then 0x1050 +
# 48); malloc(8) at 0x1090 (+1 unit of 16); the frees of 0x1050 and 0x1090
# (misses from `previous`: -4 and +4 units); End. Only the addresses FORMAT.md
# gives make both frees find their blocks and leave 64 bytes live.
V4_CARVED = columns(tags=b"\x01\x20\x20\x20\x03\x03\x11", dt=zz(5) + zz(1) * 4,
                    addr_k=varint(0) * 5, addr=zz(0x1000 >> 4) + zz(0) + zz(1) + zz(-4) + zz(4),
                    size=varint(64) + varint(40) + varint(8), stack=zz(0) * 3,
                    rest=varint(7) + varint(1) + zz(10), layout=3)


# --- version 5: codes by kind, long fields as split varints ---------------------------


def split_columns(tags: bytes, dt: bytes = b"", addr_k: bytes = b"", addr: bytes = b"", size: bytes = b"",
                  stack: bytes = b"", rest: bytes = b"", alloc_k: bytes = b"", addr_k_hi: bytes = b"",
                  alloc_k_hi: bytes = b"", addr_hi: bytes = b"", size_hi: bytes = b"") -> bytes:
    cols = (tags, dt, addr_k, addr, size, stack, rest, alloc_k, addr_k_hi, alloc_k_hi, addr_hi, size_hi)
    return bytes([4]) + varint(len(cols)) + b"".join(varint(len(c)) for c in cols) + b"".join(cols)


# Thread 7; malloc(1000) at 0x1000 (a miss from 0: zz(0x100) is 0x80 0x04, its
# first byte in addr and 0x04 in addr_hi; the carve point is then 0x1000 +
# 1008); malloc(200) at 0x13f0 (delta 0 from it); the free of 0x13f0 (the
# allocation 0 back: code 2 in addr_k) and of 0x1000 (1 back: code 3); End.
# The sizes are split too: 1000 is 0xe8 0x07, 200 is 0xc8 0x01. Only reading
# each first byte's continuation from its partner column gives these blocks.
V5_SPLIT = split_columns(tags=b"\x01\x20\x20\x03\x03\x11", dt=zz(5) + zz(1) * 3,
                         addr_k=varint(2) + varint(3), addr=b"\x80" + zz(0), addr_hi=b"\x04",
                         size=b"\xe8\xc8", size_hi=b"\x07\x01", stack=zz(0) * 2,
                         rest=varint(7) + varint(1) + zz(10), alloc_k=varint(0) * 2)


# version, payload, then (allocations, frees, live bytes) at the end
CRAFTED_DUMPS: dict[str, tuple[int, bytes, tuple[int, int, int]]] = {
    "v2 columns": (2, V2_THREAD_ALLOC_FREE_END, (1, 1, 0)),
    "v2 records": (2, b"\x00" + THREAD + alloc(5, 0x1000, 64) + b"\x03" + zz(1) + zz(0) + END, (1, 1, 0)),
    "v3 columns": (3, V3_REUSE, (3, 2, 200)),
    "v4 columns": (4, V4_CARVED, (3, 2, 64)),
    "v5 split columns": (5, V5_SPLIT, (2, 2, 0)),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(CRAFTED_DUMPS))
def test_a_crafted_dump_of_each_layout_reads(build, memrec_cli, tmp_path, reader, case):
    # given a file whose one frame is the columns FORMAT.md describes, or layout 0's records
    version, payload, counts = CRAFTED_DUMPS[case]
    data = header(version=version) + frame(payload)
    run = read_as(build, reader, tmp_path, data)
    assert_no_crash(run)
    assert run.returncode == EXIT_OK, run.describe()
    # then it holds exactly those allocations and frees (v3: all of one address), and a clean end
    info = json.loads(read_as(build, ["info", "--json"], tmp_path, data).stdout)
    assert info["format_version"] == version and info["clean_end"] is True
    assert (info["counts"]["alloc"], info["counts"]["free"], info["heap"]["live_bytes"]) == counts


# --- version 6: the Exec record (FORMAT.md, "Exec") -----------------------------------


def exec_record(dt: int, error: int, path: bytes) -> bytes:
    return b"\x12" + zz(dt) + varint(error) + string(path)


@pytest.mark.parametrize("failed", [False, True])
def test_a_crafted_dump_whose_last_record_is_exec_ended_by_exec(build, memrec_cli, tmp_path, failed):
    # given a version 6 dump: Thread 7, malloc(64), an exec of /bin/true
    # announced and, if `failed`, its failure (ENOENT), then nothing
    records = THREAD + alloc(5, 0x1000, 64) + exec_record(1, 0, b"/bin/true")
    if failed:
        records += exec_record(1, 2, b"/bin/true")
    data = header(version=6) + frame(b"\x00" + records)
    # then info reads it: without End, ended by that exec unless it failed
    info = json.loads(read_as(build, ["info", "--json"], tmp_path, data).stdout)
    assert (info["format_version"], info["clean_end"], info["counts"]["alloc"]) == (6, False, 1)
    assert (info["ended_by_exec"], info["exec_path"]) == ((False, None) if failed else (True, "/bin/true"))


# --- version 7: markers and the source of a pause (FORMAT.md, "Recording", "Marker") ---


def test_a_crafted_version_6_dump_reads_its_pauses_as_the_signals(build, memrec_cli, tmp_path):
    # given a version 6 dump paused and resumed (flags 0 and 1, all version 6 wrote)
    data = header(version=6) + frame(b"\x00" + THREAD + b"\x0f" + zz(1) + b"\x00" + b"\x0f" + zz(1) + b"\x01" + END)
    info = json.loads(read_as(build, ["info", "--json"], tmp_path, data).stdout)
    # then each is the signal's, and there are no markers
    assert [(r["on"], r["source"]) for r in info["recording"]] == [(False, "signal"), (True, "signal")]
    assert info["markers"] == []


def test_a_crafted_version_7_dump_lists_hostile_marker_labels_as_valid_json(build, memrec_cli, tmp_path):
    # given a version 7 dump: stopped by ctl, a marker whose label holds a
    # control character and a byte that is not UTF-8, resumed by ctl
    label = b"load\x01\xffend"
    records = (THREAD + b"\x0f" + zz(1) + bytes([0 | 1 << 1]) + b"\x13" + zz(1) + b"\x02" + string(label)
               + b"\x0f" + zz(1) + bytes([1 | 1 << 1]) + END)
    data = header(version=7) + frame(b"\x00" + records)
    run = read_as(build, ["report", "--json"], tmp_path, data)
    assert run.returncode == EXIT_OK, run.describe()
    rep = json.loads(run.stdout)["processes"][0]["report"]
    assert [(r["on"], r["source"]) for r in rep["recording"]] == [(False, "ctl"), (True, "ctl")]
    assert [(m["label"], m["source"]) for m in rep["markers"]] == [("load\x01\ufffdend", "api")]
    # and a source past the last is a corrupt frame
    bad = header(version=7) + frame(b"\x00" + THREAD + b"\x13" + zz(1) + b"\x09" + string(b"x") + END)
    run = read_as(build, ["info"], tmp_path, bad)
    assert run.returncode == 2 and "a Marker record names an unknown source" in run.stderr, run.describe()


V3_CORRUPT_FRAMES: dict[str, tuple[bytes, str]] = {
    "a free of an allocation never made": (
        columns(tags=b"\x01\x03", dt=zz(1), addr_k=varint(2), rest=varint(7), layout=2),
        "a free names allocation 0 back of 0"),
    "an allocation of a free never made": (
        columns(tags=b"\x01\x20", dt=zz(1), addr_k=varint(5), size=varint(8), stack=zz(0), rest=varint(7),
                layout=2), "an allocation names free 1 back of 0"),
    "an allocation of a class never freed": (
        columns(tags=b"\x01\x20", dt=zz(1), addr_k=varint(2), size=varint(8), stack=zz(0), rest=varint(7),
                layout=2), "an allocation names free 0 back of 0 in size class 1"),
    "a mapping named by age": (
        columns(tags=b"\x01\x06", dt=zz(1), addr_k=varint(2), size=varint(4096), rest=varint(7), layout=2),
        "a mapping address names earlier address 0"),
    "a split size without the rest of its bytes": (
        split_columns(tags=b"\x01\x20", dt=zz(1), alloc_k=varint(0), addr=b"\x80", addr_hi=b"\x04", size=b"\xe8",
                      stack=zz(0), rest=varint(7)), "record 0x20 runs past its columns"),
    "split columns with a byte no record uses": (
        split_columns(tags=b"\x01\x03", dt=zz(1), addr_k=varint(0), addr=zz(1), size_hi=b"\x01", rest=varint(7)),
        "column 11 has bytes no record uses"),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(V3_CORRUPT_FRAMES))
def test_version_3_columns_naming_nothing_are_corrupt_at_their_offset(build, memrec_cli, tmp_path, reader, case):
    payload, phrase = V3_CORRUPT_FRAMES[case]
    good = frame(b"\x00" + THREAD + alloc(5, 0x1000, 64))
    data = header(version=3) + good + frame(payload)
    run = read_as(build, reader, tmp_path, data)
    assert_rejected(run, "hostile.dat", "corrupt frame", f"offset {len(header(version=3)) + len(good)}", phrase)


V2_CORRUPT_FRAMES: dict[str, tuple[bytes, str]] = {
    "no layout byte": (b"", "no layout byte"),
    "unknown layout": (b"\x07" + THREAD + END, "unknown layout 7"),
    "six columns": (b"\x01" + varint(6) + varint(0) * 6, "column directory"),
    "columns past the frame": (b"\x01" + varint(7) + varint(100) + varint(0) * 6, "column directory"),
    "a ring slot never filled": (columns(tags=b"\x01\x20", dt=zz(1), addr_k=varint(5), size=varint(8),
                                         stack=zz(0), rest=varint(7)), "ring slot 3 of 0"),
    "a byte no record uses": (columns(tags=b"\x01", dt=zz(1), rest=varint(7)), "column 1 has bytes"),
    "an alloc without its size": (columns(tags=b"\x01\x20", dt=zz(1), addr_k=varint(0), addr=zz(1),
                                          stack=zz(0), rest=varint(7)), "runs past its columns"),
}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(V2_CORRUPT_FRAMES))
def test_version_2_columns_that_do_not_join_are_corrupt_at_their_offset(build, memrec_cli, tmp_path, reader,
                                                                         case):
    payload, phrase = V2_CORRUPT_FRAMES[case]
    good = frame(b"\x00" + THREAD + alloc(5, 0x1000, 64))
    data = header(version=2) + good + frame(payload)
    run = read_as(build, reader, tmp_path, data)
    assert_rejected(run, "hostile.dat", "corrupt frame", f"offset {len(header(version=2)) + len(good)}", phrase)


# --- crafted frames that decode but make no sense -------------------------------------

TOP = (1 << 64) - 1
NONSENSE_FRAMES: dict[str, bytes] = {
    "alloc of a stack never defined": THREAD + alloc(1, 0x1000, 64, dstack=12345) + END,
    "alloc of a stack id past any table": THREAD + alloc(1, 0x1000, 64, dstack=1 << 30) + alloc(1, 64, 8) + END,
    "alloc at the top of the address space": THREAD + alloc(1, TOP - 7, TOP) + END,
    "the same address allocated twice": THREAD + alloc(1, 0x1000, 64) + alloc(1, 0, 64) + END,
    "free of an unknown address": THREAD + b"\x03" + zz(1) + zz(0xdead) + END,
    "time running backwards": THREAD + alloc(1000, 0x1000, 8) + alloc(-(1 << 62), 16, 8) + END,
    "mmap wrapping past the top": THREAD + b"\x05" + zz(1) + zz(TOP - 4095) + varint(1 << 40) + varint(3) +
    varint(0x22) + zz(0) + b"\x06" + zz(1) + zz(-4096) + varint(TOP) + END,
    "munmap of everything": THREAD + b"\x06" + zz(1) + zz(0) + varint(TOP) + END,
    "mremap to a zero size": THREAD + b"\x07" + zz(1) + zz(0x5000) + varint(4096) + varint(1) + zz(0) +
    varint(0) + zz(0) + END,
    "realloc of a huge size": THREAD + b"\x04\x02" + zz(1) + zz(0x1000) + varint(1) + zz(0) + varint(TOP) +
    zz(0) + END,
    "module with wrapping segments": b"\x09" + varint(1) + varint(1) + string(b"/no/such/lib.so") +
    varint(TOP) + string(b"\xff" * 20) + varint(2) + (varint(TOP) + varint(TOP) + varint(TOP) + b"\x07") * 2 + END,
    "stack of addresses past any module": b"\x08" + varint(1) + varint(99) + b"\x01" + varint(3) +
    zz(TOP) + zz(-1) + zz(1 << 62) + THREAD + alloc(1, 0x1000, 8, dstack=1) + END,
    "module unloaded before it loads": b"\x0a" + varint(3) + varint(0) + END,
    "thread exit of a thread never seen": b"\x0d" + varint(99) + zz(1) + END,
    "counters with unknown keys": b"\x10" + varint(2) + varint(1 << 60) + varint(TOP) + varint(99) + varint(1) + END,
    "records after End": THREAD + END + alloc(1, 0x1000, 8) + END,
}


def test_a_stack_id_past_any_table_is_counted_in_the_report(build, memrec_cli, tmp_path):
    """An id of 2**26 or more cannot be a stack of a real recording: the replay
    counts such allocations under no stack, and the report says how many (both
    here: the second one's stack delta is 0)."""
    data = header() + frame(NONSENSE_FRAMES["alloc of a stack id past any table"])
    text = read_as(build, ["report"], tmp_path, data)
    assert text.returncode == EXIT_OK, text.stderr
    assert "counted without a stack: 2\n" in text.stdout
    as_json = read_as(build, ["report", "--json"], tmp_path, data)
    assert as_json.returncode == EXIT_OK, as_json.stderr
    assert json.loads(as_json.stdout)["processes"][0]["report"]["bad_stack_ids"] == 2
    plain = read_as(build, ["report", "--json"], tmp_path, header() + frame(THREAD + alloc(1, 0x1000, 64) + END))
    assert json.loads(plain.stdout)["processes"][0]["report"]["bad_stack_ids"] == 0


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("case", list(NONSENSE_FRAMES))
def test_records_that_make_no_sense_never_crash_the_analyzer(build, memrec_cli, tmp_path, reader, case):
    """Frames that decode but describe the impossible: the analyzer may read
    them (exit 0) or reject the file (exit 2, one line), but never crash."""
    run = read_as(build, reader, tmp_path, header() + frame(NONSENSE_FRAMES[case]))
    assert_no_crash(run)
    if run.returncode != EXIT_OK:
        assert_rejected(run, "hostile.dat")
