"""Each frame's note of its earliest event time (FORMAT.md, "Frames"): the
recorder writes it in front of every frame's zstd data, the analyzer orders
the replay by it instead of decompressing every frame twice, reads dumps
without notes (older recorders) the same way, and rejects a note its events
contradict."""
import struct

import memrec_support as support

NOTE_MAGIC = 0x184D2A5E


def frames(data: bytes):
    """[(offset, compressed bytes)] of the complete frames."""
    at = 16 + struct.unpack_from("<I", data, 12)[0]
    out = []
    while at + 12 <= len(data) and data[at:at + 4] == b"MRFZ":
        size = struct.unpack_from("<I", data, at + 4)[0]
        out.append((at, data[at + 12:at + 12 + size]))
        at += 12 + size
    return out


def has_note(body: bytes) -> bool:
    return len(body) >= 16 and struct.unpack_from("<II", body) == (NOTE_MAGIC, 8)


def without_notes(data: bytes) -> bytes:
    """The dump as a recorder without notes writes it: each note dropped, each
    frame's compressed size 16 bytes less."""
    parts = frames(data)
    out = bytearray(data[:parts[0][0]])
    for at, body in parts:
        assert has_note(body)
        decompressed = data[at + 8:at + 12]
        out += b"MRFZ" + struct.pack("<I", len(body) - 16) + decompressed + body[16:]
    out += data[parts[-1][0] + 12 + len(parts[-1][1]):]
    return bytes(out)


def test_every_frame_notes_its_earliest_event_and_the_reports_match_without(build, record, tmp_path):
    # given threads_pass (4 threads passing blocks around: the replay's order
    # across frames matters) recorded now, a frame every 10 ms (its 80,000
    # allocations would fit in one frame of 512 KiB)
    run = record("threads_pass", env={"MEMREC_FLUSH_INTERVAL_MS": "10"})
    assert run.returncode == 0, run.describe()
    dat = run.dats[0]
    data = dat.read_bytes()
    notes = [struct.unpack_from("<Q", body, 8)[0] for _, body in frames(data) if has_note(body)]
    # then every frame has a note, and the frames with events note real times
    assert len(notes) == len(frames(data)) >= 2
    assert any(t != 2**64 - 1 for t in notes)
    # when the same dump without notes is read
    old = tmp_path / "without_notes.dat"
    old.write_bytes(without_notes(data))
    # then both read the same, figure for figure
    with_notes_doc = support.report(build, dat)
    without_doc = support.report(build, old)
    for doc in (with_notes_doc, without_doc):
        for process in doc["processes"]:
            process["report"].pop("file", None)
            process["report"]["dump"].pop("file_bytes")  # 16 bytes a frame less without notes
    assert with_notes_doc["processes"] == without_doc["processes"]
    totals = with_notes_doc["processes"][0]["report"]
    assert totals["allocations"] >= 80000
    assert totals["unmatched_frees"] == 0


def test_a_note_the_events_contradict_is_corrupt_at_its_frame(build, record, tmp_path):
    # given a dump whose first frame with events notes a time one ns later
    run = record("leak_three")
    data = bytearray(run.dats[0].read_bytes())
    at, body = next((at, body) for at, body in frames(bytes(data))
                    if has_note(body) and struct.unpack_from("<Q", body, 8)[0] != 2**64 - 1)
    time_at = at + 12 + 8
    struct.pack_into("<Q", data, time_at, struct.unpack_from("<Q", data, time_at)[0] + 1)
    bad = tmp_path / "bad_note.dat"
    bad.write_bytes(bytes(data))
    # when memrec report reads it
    result = support.memrec_raw(build, ["report", bad])
    # then it is bad input, naming the file, the frame and the two times
    assert result.returncode == 2, result.describe()
    assert f"corrupt frame at offset {at}" in result.stderr
    assert "as its earliest event time" in result.stderr


def test_a_frame_ends_full_and_no_frame_of_a_few_events_follows_it(build, record):
    # given churn making 600,000 allocations, about 13 frames' worth, in well
    # under the 1 s after which a frame is written however full
    run = record("churn", "600000")
    assert run.returncode == 0, run.describe()
    data = run.dats[0].read_bytes()
    sizes = [struct.unpack_from("<I", data, at + 8)[0] for at, _ in frames(data)]
    # then every frame but the last reached the writer's 512 KiB of columns
    # (a check of the flush interval once compared a time from before the
    # writer's drains with a flush during them, and wrote a frame of the few
    # events drained after each full one)
    assert len(sizes) >= 10
    assert all(size >= 512 << 10 for size in sizes[:-1]), sizes
