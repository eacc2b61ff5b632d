// Splits a dump's bytes after the file header into frames (FORMAT.md,
// "Frames") without decompressing anything, so that callers can decode the
// frames in any order, in parallel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "memrec/reader/result.h"

namespace memrec::reader {

// From this version on several writers of one process may place frames in the
// file, each at an offset it reserved (FORMAT.md, "Frames"): a frame one of
// them did not finish may lie before complete frames of the others, and is
// skipped instead of ending the dump.
inline constexpr std::uint16_t kSeveralWritersVersion = 8;

struct FrameInfo {
  std::uint64_t offset = 0;  // of the envelope ("MRFZ") in the file
  std::uint32_t compressed_bytes = 0;
  std::uint32_t decompressed_bytes = 0;
  // A run of zero bytes reaches into this frame far enough to be bytes never
  // written (frame_index.cpp: from a 512-byte boundary, or 8 bytes or more):
  // the file's trailing run, or from kSeveralWritersVersion on the run that
  // ends the frame's own bytes. If such a frame fails to decompress it was
  // never fully written (power loss, or a writer stopped mid-frame), which is
  // a cut at `offset`, not corruption.
  bool reaches_zero_tail = false;
  // The file's format version: from 2 on, a payload starts with its layout
  // byte (FORMAT.md, "Columns").
  std::uint16_t format_version = 1;
  // The earliest heap or mapping event time the writer noted in front of the
  // zstd data (FORMAT.md, "Frames"; kNoEarliest: no event); nothing when the
  // frame has no such note (older writers). Unchecked until the frame is
  // decoded: the loader compares it with the events (load/dump_loader.cpp).
  std::optional<std::uint64_t> earliest_ns;

  std::uint64_t payload_offset() const;
  std::uint64_t end_offset() const;
};

// Bytes of a frame that was never fully written, followed by complete frames.
struct CutFrame {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};

struct FrameIndex {
  std::vector<FrameInfo> frames;              // complete frames, in file order
  std::vector<CutFrame> cut;                  // skipped frames before complete ones (version 8 on)
  std::optional<std::uint64_t> truncated_at;  // where the unread tail starts
};

// `first_frame` is FileHeader::size_bytes and `format_version` the header's
// version, which every FrameInfo carries. A complete envelope with a wrong
// tag or a size over kMaxFrameBytes is kCorrupt; an incomplete frame, or a
// tail of zero bytes at a frame boundary, ends the index with `truncated_at`.
// From kSeveralWritersVersion on, zero bytes at a frame boundary with a frame
// after them (space a writer reserved and never filled, possibly behind the
// first bytes of its tag) are listed in `cut` and skipped.
// `passed` (if set) is called now and then with an offset the index will not
// read before again: a multi-GB dump's envelopes, one page each, faulted in
// more than a gigabyte of the mapping before (open_dump drops them).
Result<FrameIndex> index_frames(std::span<const std::byte> file, std::uint64_t first_frame,
                                std::uint16_t format_version, std::string_view name,
                                const std::function<void(std::uint64_t)>& passed = {});

}  // namespace memrec::reader
