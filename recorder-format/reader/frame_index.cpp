// Walks the frame envelopes. A dump cut short by a crash of the profiled
// program is normal input: keep every complete frame and note where the loss
// starts. Bytes that are present but cannot be a frame are corruption.
#include "memrec/reader/frame_index.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>

#include "byte_reader.h"
#include "memrec/format/file_header.h"
#include "memrec/format/records.h"

namespace memrec::reader {
namespace {

using format::kFrameEnvelopeBytes;

// Where the file's trailing run of zero bytes starts (file.size() if none).
std::uint64_t zero_tail_start(std::span<const std::byte> file) {
  std::size_t end = file.size();
  while (end > 0 && file[end - 1] == std::byte{0}) --end;
  return end;
}

// Where, inside a frame, a zero tail starting at `zeros` may be bytes never
// written (file.size() if nowhere). Power loss leaves a file extended with
// zeros in whole filesystem blocks, so such a run starts on a 512-byte
// boundary; a short run elsewhere is more likely the frame's own last bytes
// (its zstd checksum ends in a zero byte one time in 256), and that frame must
// still be checked, not dropped as never written. A run of kLongZeroRun bytes
// or more counts wherever it starts: no frame that decodes ends so. (Zeros
// where a frame would start are never written, however few: a frame starts
// with its tag.)
constexpr std::uint64_t kBlockBytes = 512;
constexpr std::uint64_t kLongZeroRun = 8;

// `zeros` starts a run of zero bytes that ends at `run_end`.
std::uint64_t unwritten_from(std::uint64_t zeros, std::uint64_t run_end) {
  if (run_end - zeros >= kLongZeroRun) return zeros;
  const std::uint64_t block = (zeros + kBlockBytes - 1) / kBlockBytes * kBlockBytes;
  return std::min<std::uint64_t>(block, run_end);
}

// The first non-zero byte at or after `at` (file.size() if none).
std::uint64_t next_written(std::span<const std::byte> file, std::uint64_t at) {
  while (at < file.size() && file[at] == std::byte{0}) ++at;
  return at;
}

// Whether the zero run that ends this frame's bytes, with any zeros right
// after them, can be bytes never written.
bool ends_unwritten(std::span<const std::byte> file, const FrameInfo& frame) {
  std::uint64_t zeros = frame.end_offset();
  while (zeros > frame.offset && file[zeros - 1] == std::byte{0}) --zeros;
  if (zeros == frame.end_offset()) return false;
  return unwritten_from(zeros, next_written(file, frame.end_offset())) < frame.end_offset();
}

// Where the zeros start if the bytes at `at` are the first 0 to 3 bytes of a
// frame tag and then zeros: a writer stopped before it wrote the rest of its
// frame, or never wrote the space it reserved.
std::optional<std::uint64_t> unwritten_start(std::span<const std::byte> file, std::uint64_t at) {
  for (std::size_t i = 0; i < format::kFrameTag.size() && at + i < file.size(); ++i) {
    if (file[at + i] == std::byte{0}) return at + i;
    if (file[at + i] != static_cast<std::byte>(format::kFrameTag[i])) return std::nullopt;
  }
  return std::nullopt;
}

Error bad_tag(std::string_view name, std::uint64_t at) {
  return Error{ErrorCode::kCorrupt,
               fmt::format("{}: corrupt frame at offset {}: no MRFZ tag; the file is damaged from there on", name, at)};
}

// The time in a leading skippable frame of kEarliestMagic, if there is one.
std::optional<std::uint64_t> earliest_note(std::span<const std::byte> compressed) {
  if (compressed.size() < format::kEarliestBytes) return std::nullopt;
  ByteReader note(compressed.first(format::kEarliestBytes));
  if (note.u32le() != format::kEarliestMagic || note.u32le() != 8) return std::nullopt;
  const std::uint64_t low = note.u32le();
  return low | std::uint64_t{note.u32le()} << 32;
}

}  // namespace

std::uint64_t FrameInfo::payload_offset() const { return offset + kFrameEnvelopeBytes; }
std::uint64_t FrameInfo::end_offset() const { return payload_offset() + compressed_bytes; }

Result<FrameIndex> index_frames(std::span<const std::byte> file, std::uint64_t first_frame,
                                std::uint16_t format_version, std::string_view name,
                                const std::function<void(std::uint64_t)>& passed) {
  constexpr std::uint64_t kPassedEvery = std::uint64_t{64} << 20;
  FrameIndex index;
  const bool several_writers = format_version >= kSeveralWritersVersion;
  const std::uint64_t zeros_from = zero_tail_start(file);
  const std::uint64_t tail_unwritten_from = unwritten_from(zeros_from, file.size());
  std::uint64_t at = std::min<std::uint64_t>(first_frame, file.size());
  std::uint64_t passed_at = at;
  while (at < file.size()) {
    if (passed && at - passed_at >= kPassedEvery) {
      passed(at);
      passed_at = at;
    }
    // All that is left is zeros: the file was extended but never written.
    if (at >= zeros_from) break;
    if (const auto zeros = several_writers ? unwritten_start(file, at) : std::nullopt) {
      const std::uint64_t next = next_written(file, *zeros);
      if (next == file.size()) break;
      index.cut.push_back(CutFrame{at, next - at});
      at = next;
      continue;
    }
    if (file.size() - at < kFrameEnvelopeBytes) {
      // A cut envelope: what is there must still look like one.
      const std::size_t n = std::min<std::size_t>(file.size() - at, format::kFrameTag.size());
      if (std::memcmp(file.data() + at, format::kFrameTag.data(), n) != 0) return bad_tag(name, at);
      break;
    }

    ByteReader envelope(file.subspan(at, kFrameEnvelopeBytes));
    std::byte tag[4];
    for (auto& b : tag) b = std::byte{envelope.u8()};
    FrameInfo frame;
    frame.offset = at;
    frame.format_version = format_version;
    frame.compressed_bytes = envelope.u32le();
    frame.decompressed_bytes = envelope.u32le();
    if (std::memcmp(tag, format::kFrameTag.data(), sizeof tag) != 0) return bad_tag(name, at);
    const std::uint32_t larger = std::max(frame.compressed_bytes, frame.decompressed_bytes);
    if (larger > format::kMaxFrameBytes) {
      return Error{ErrorCode::kCorrupt,
                   fmt::format("{}: corrupt frame at offset {}: a size of {} bytes is over the {} limit", name, at,
                               larger, format::kMaxFrameBytes)};
    }
    if (file.size() - at - kFrameEnvelopeBytes < frame.compressed_bytes) break;  // incomplete
    frame.reaches_zero_tail = several_writers ? ends_unwritten(file, frame) : tail_unwritten_from < frame.end_offset();
    frame.earliest_ns = earliest_note(file.subspan(frame.payload_offset(), frame.compressed_bytes));
    index.frames.push_back(frame);
    at = frame.end_offset();
  }
  if (at < file.size()) index.truncated_at = at;
  return index;
}

}  // namespace memrec::reader
