// Builds .dat files in memory with the real encoder and zstd, the way the
// preload writes them, so reader and analyzer tests start from true bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "memrec/format/address_ages.h"
#include "memrec/format/file_header.h"
#include "memrec/format/record_encoder.h"

namespace memrec::testing {

// The header most tests use: pid 4242, ppid 1, start_mono_ns 1'000'000.
format::FileHeaderFields sample_header();

// A whole file header, as encode_file_header writes it.
std::vector<std::byte> encode_header(const format::FileHeaderFields& fields);

// Compresses `payload` (zstd, with a content checksum) behind a frame envelope.
std::vector<std::byte> encode_frame(std::span<const std::byte> payload);

// An AgeCoder with its table, 64-byte aligned as it needs.
struct AgeTables {
  struct alignas(64) Line {
    std::byte b[64];
  };
  std::vector<Line> memory = std::vector<Line>(format::AgeCoder::kMemoryBytes / sizeof(Line));
  format::AgeCoder coder{std::as_writable_bytes(std::span(memory))};
};

// How a columns payload codes its addresses (FORMAT.md, "Columns").
enum class ColumnCoding {
  kSplit,   // the current version's: kCarved's codes, split into columns by kind and byte
  kCarved,  // version 4's: by age, allocation misses from the carve point
  kAged,    // version 3's: by age
  kRings,   // version 2's: by ring position
};

// A frame's payload from its version-1 records, split into columns as the
// writer of that coding's version made it.
std::vector<std::byte> columns_payload(std::span<const std::byte> records, ColumnCoding coding = ColumnCoding::kSplit);

// How DumpBuilder lays out each frame's records.
enum class FrameLayout {
  kColumns,        // the current version, as the preload writes
  kRecords,        // the current version's fallback: layout byte 0, then the records
  kCarvedColumns,  // a version-4 file: columns with age-coded addresses and carved misses
  kAgedColumns,    // a version-3 file: columns with age-coded addresses
  kRingColumns,    // a version-2 file: columns with ring-coded addresses
  kVersion1,       // a version-1 file: the header says 1, payloads are records
};

class DumpBuilder {
 public:
  explicit DumpBuilder(const format::FileHeaderFields& fields = sample_header(),
                       FrameLayout layout = FrameLayout::kColumns);

  // Encodes one frame: `fill` writes records with a fresh encoder (delta
  // state reset); every write must fit in 1 MiB.
  DumpBuilder& frame(const std::function<void(format::RecordEncoder&)>& fill);
  // Appends raw bytes (a hand-made frame or garbage).
  DumpBuilder& raw(std::span<const std::byte> bytes);

  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::size_t header_bytes() const { return header_bytes_; }
  // Where each frame starts and ends, in file order.
  const std::vector<std::size_t>& frame_offsets() const { return frame_offsets_; }
  const std::vector<std::size_t>& frame_ends() const { return frame_ends_; }

 private:
  std::vector<std::byte> bytes_;
  std::size_t header_bytes_ = 0;
  std::vector<std::size_t> frame_offsets_;
  std::vector<std::size_t> frame_ends_;
  FrameLayout layout_;
};

// Writes `bytes` to a fresh file under the build's temp dir; returns its path.
std::string write_temp_file(std::span<const std::byte> bytes, const std::string& stem);

std::vector<std::byte> to_bytes(std::string_view s);

}  // namespace memrec::testing
