// Decompresses one frame and decodes its records. Each frame has its own
// delta state, so one FrameDecoder per worker thread can decode frames in any
// order; the analyzer streams them without keeping the records.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "memrec/reader/frame_index.h"
#include "memrec/reader/records.h"
#include "memrec/reader/result.h"

struct ZSTD_DCtx_s;

namespace memrec::reader {

// Decodes a decompressed payload, calling `visitor` for each record. Every
// decode failure (unknown tag, a varint or string running off the end, a
// string over kMaxStringBytes, a stack deeper than kMaxStackDepth, an event
// before any Thread record) is kCorrupt, naming `name` and `frame_offset`.
// Records before the failure have already been visited.
Status decode_records(std::span<const std::byte> payload, std::string_view name, std::uint64_t frame_offset,
                      RecordVisitor& visitor);

// Decodes a columns payload of `layout` (any of
// format::is_columns_layout; the payload without its layout byte) straight from its
// columns, as join_columns() then decode_records() would, with the same
// checks: kCorrupt, naming `name` and `frame_offset`, when the columns do not
// decode exactly.
Status decode_columns(std::span<const std::byte> payload, std::uint8_t layout, std::string_view name,
                      std::uint64_t frame_offset, RecordVisitor& visitor);

class FrameDecoder {
 public:
  FrameDecoder();
  ~FrameDecoder();
  FrameDecoder(const FrameDecoder&) = delete;
  FrameDecoder& operator=(const FrameDecoder&) = delete;

  // Decompresses `frame` of `file` (into exactly its decompressed size) and
  // returns its records in version 1's layout (a version-2 frame's columns
  // joined). The span is valid until the next call. kCorrupt on a zstd error,
  // a size mismatch or columns that do not join; kTruncated instead when the
  // frame reaches the file's zero tail.
  Result<std::span<const std::byte>> decompress(std::span<const std::byte> file, const FrameInfo& frame,
                                                std::string_view name);

  // Decompresses `frame` and visits its records: decode_columns() for a
  // columns payload, decode_records() otherwise. Nothing is visited if
  // decompression fails.
  Status decode(std::span<const std::byte> file, const FrameInfo& frame, std::string_view name, RecordVisitor& visitor);

 private:
  // The decompressed payload, its layout byte (if any) still in front.
  Result<std::span<const std::byte>> inflate(std::span<const std::byte> file, const FrameInfo& frame,
                                             std::string_view name);

  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<std::byte> payload_;
  std::vector<std::byte> records_;  // a columns payload joined
};

}  // namespace memrec::reader
