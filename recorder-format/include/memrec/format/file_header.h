// Encodes the file header (FORMAT.md, "File header"). Used by the preload once
// per file; allocation-free.
//
//   0        8        10       12             16
//   +--------+--------+--------+--------------+---------------------+
//   | magic  | version| 0      | body length L| body (L bytes)      |
//   +--------+--------+--------+--------------+---------------------+
//   body: varint pid, ppid, start_wall_ns, start_mono_ns, page_size;
//         bytes exe_path; bytes cmdline (NUL-separated, like /proc/PID/cmdline);
//         varint n; n x (string key, string value)   -- the options in force
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "memrec/format/byte_writer.h"
#include "memrec/format/records.h"

namespace memrec::format {

struct OptionPair {
  std::string_view key;
  std::string_view value;
};

struct FileHeaderFields {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::uint64_t start_wall_ns = 0;  // CLOCK_REALTIME, ns since the Unix epoch
  std::uint64_t start_mono_ns = 0;  // CLOCK_MONOTONIC: the clock of every event time
  std::uint64_t page_size = 0;
  std::string_view exe_path;
  std::span<const std::byte> cmdline;
  std::span<const OptionPair> options;
};

// Writes the whole header to the front of `w`. Returns false if it did not fit.
inline bool encode_file_header(ByteWriter& w, const FileHeaderFields& h) {
  w.raw(std::as_bytes(std::span(kFileMagic)));
  w.u16le(kFormatVersion);
  w.u16le(0);
  const std::size_t length_at = w.size();
  w.u32le(0);  // patched below, once the body's length is known
  const std::size_t body_at = w.size();
  w.varint(h.pid);
  w.varint(h.ppid);
  w.varint(h.start_wall_ns);
  w.varint(h.start_mono_ns);
  w.varint(h.page_size);
  w.string(h.exe_path);
  w.bytes(h.cmdline);
  w.varint(h.options.size());
  for (const OptionPair& o : h.options) {
    w.string(o.key);
    w.string(o.value);
  }
  if (!w.ok()) return false;
  const auto body = static_cast<std::uint32_t>(w.size() - body_at);
  if (body > kMaxHeaderBodyBytes) return false;
  for (int i = 0; i < 4; ++i) {
    w.written()[length_at + static_cast<std::size_t>(i)] = std::byte{static_cast<std::uint8_t>(body >> (8 * i))};
  }
  return true;
}

// A frame's compressed bytes may start with a zstd skippable frame (RFC
// 8878, 3.1.2) holding the earliest heap or mapping event time of the frame
// (FORMAT.md, "Frames"): the analyzer orders events across frames by it
// without decompressing them twice, and a zstd decoder skips it on its own.
inline constexpr std::uint32_t kEarliestMagic = 0x184D2A5E;  // a skippable-frame magic
inline constexpr std::size_t kEarliestBytes = 16;            // magic, u32 size 8, u64 time
inline constexpr std::uint64_t kNoEarliest = ~0ull;          // a frame without events

inline void encode_earliest(std::span<std::byte, kEarliestBytes> out, std::uint64_t earliest_ns) {
  const std::uint64_t fields[] = {kEarliestMagic | (std::uint64_t{8} << 32), earliest_ns};
  for (std::size_t i = 0; i < kEarliestBytes; ++i) {
    out[i] = std::byte{static_cast<std::uint8_t>(fields[i / 8] >> (8 * (i % 8)))};
  }
}

// Writes a frame envelope (tag, compressed size, decompressed size) into `out`,
// which must hold kFrameEnvelopeBytes.
inline void encode_frame_envelope(std::span<std::byte, kFrameEnvelopeBytes> out, std::uint32_t compressed,
                                  std::uint32_t decompressed) {
  for (std::size_t i = 0; i < 4; ++i) out[i] = static_cast<std::byte>(kFrameTag[i]);
  for (std::size_t i = 0; i < 4; ++i) {
    out[4 + i] = std::byte{static_cast<std::uint8_t>(compressed >> (8 * i))};
    out[8 + i] = std::byte{static_cast<std::uint8_t>(decompressed >> (8 * i))};
  }
}

}  // namespace memrec::format
