"""Frames a writer left unfinished before complete frames of other writers
(FORMAT.md, "Frames of several writers").

Given a real recording of threads_pass (80,000 blocks freed across 4 threads)
with space for one more frame laid between its frames, part of it never
written (zeros from where a killed writer stopped), when `memrec info` and
`memrec report` read it, then every event of the complete frames is read,
exactly as in the untouched recording, and a note says where the unfinished
frame lies. The same bytes under a version 7 header are corrupt, as they
were for version 7's readers.
"""
from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

import memrec_support as support

EXIT_OK, EXIT_BAD_INPUT = 0, 2


def header_size(dump: bytes) -> int:
    return 16 + struct.unpack_from("<I", dump, 12)[0]


def frames(dump: bytes) -> list[bytes]:
    at, out = header_size(dump), []
    while at < len(dump):
        end = at + 12 + struct.unpack_from("<I", dump, at + 4)[0]
        out.append(dump[at:end])
        at = end
    return out


@pytest.fixture(scope="module")
def recording(build, tmp_path_factory) -> bytes:
    run = support.record(build, "threads_pass", tmp_path=tmp_path_factory.mktemp("cut-frames"))
    assert run.returncode == 0 and len(run.dats) == 1, run.describe()
    data = run.dats[0].read_bytes()
    assert struct.unpack_from("<H", data, 8)[0] == 9
    assert len(frames(data)) >= 2, "threads_pass wrote one frame: nothing to lay a cut frame between"
    return data


def memrec(build, argv: list[str], cwd: Path, data: bytes) -> support.Run:
    (cwd / "pool.dat").write_bytes(data)
    full = [str(build.memrec), *argv, "pool.dat"]
    return support.finish(support.start(full, support.clean_env(), cwd=cwd), full, support.TIMEOUT_S)


def info(build, tmp_path: Path, data: bytes) -> dict:
    run = memrec(build, ["info", "--json"], tmp_path, data)
    assert run.returncode == EXIT_OK, run.describe()
    return json.loads(run.stdout)


# Where the unfinished frame's bytes stop: a page into it (the kernel cuts a
# killed writer's write at a page boundary), inside its tag, and inside its sizes.
@pytest.mark.parametrize("written", [4096, 2, 7])
def test_complete_frames_after_an_unfinished_one_are_read(build, memrec_cli, tmp_path, recording, written):
    # given the recording with a copy of its largest frame (a pool writer's:
    # the main writer's last one holds little more than End), written only up
    # to `written` bytes, laid before its last frame
    head = recording[:header_size(recording)]
    parts = frames(recording)
    largest = max(parts, key=len)
    unfinished = largest[:written] + bytes(max(len(largest) - written, 0))
    assert len(largest) > 4096 + 8
    cut_at = len(head) + sum(map(len, parts[:-1]))
    data = head + b"".join(parts[:-1]) + unfinished + parts[-1]
    # when memrec info reads it
    whole, cut = info(build, tmp_path, recording), info(build, tmp_path, data)
    # then it holds exactly the untouched recording's events and ends cleanly
    assert cut["counts"] == whole["counts"]
    assert cut["heap"] == whole["heap"]
    assert (cut["frames"], cut["clean_end"], cut["truncated_at"]) == (len(parts), True, None)
    # and one note names the stretch never written
    notes = [n for n in cut["notes"] if n["kind"] == "frames_cut"]
    assert [n["message"] for n in notes] == [
        f"1 stretch of {len(unfinished)} bytes from offset {cut_at} never fully written (a writer was stopped "
        "mid-frame): their events are lost, the frames after them were read"]
    # and the text reports read it too, leaking nothing
    for argv in (["info"], ["report"], ["report", "--json"]):
        run = memrec(build, argv, tmp_path, data)
        assert run.returncode == EXIT_OK, run.describe()
    report = json.loads(memrec(build, ["report", "--json"], tmp_path, data).stdout)
    assert json.dumps(report).count("never fully written") == 1


def test_an_unfinished_frame_of_a_version_7_file_is_corrupt(build, memrec_cli, tmp_path, recording):
    # given the same layout under a version 7 header, whose files have one writer
    head = recording[:header_size(recording)]
    parts = frames(recording)
    cut_at = len(head) + sum(map(len, parts[:-1]))
    largest = max(parts, key=len)
    data = bytearray(head + b"".join(parts[:-1]) + largest[:4096] + bytes(len(largest) - 4096) + parts[-1])
    data[8:10] = struct.pack("<H", 7)
    # when memrec info reads it, then it names the file and the frame's offset, exit 2
    run = memrec(build, ["info"], tmp_path, bytes(data))
    assert run.returncode == EXIT_BAD_INPUT, run.describe()
    assert f"pool.dat: corrupt frame at offset {cut_at}" in run.stderr
