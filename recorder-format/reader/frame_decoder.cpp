// Decompresses frames with one reusable zstd context per decoder. Every zstd
// result is checked, in release builds too: a frame must decompress to exactly
// the size its envelope promises. A version-2 or -3 payload's layout byte says
// whether records or columns follow. decode() reads columns directly
// (column_decoder.cpp); decompress() joins them back into version 1's
// records for callers that want the bytes.
#include "memrec/reader/frame_decoder.h"

#include <zstd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "memrec/format/frame_columns.h"
#include "memrec/reader/frame_columns_join.h"

namespace memrec::reader {

FrameDecoder::FrameDecoder() : dctx_(ZSTD_createDCtx()) {
  // Out of memory this early leaves nothing sensible to do.
  if (dctx_ == nullptr) detail::bad_result_access("ZSTD_createDCtx failed");
}

FrameDecoder::~FrameDecoder() { ZSTD_freeDCtx(dctx_); }

Result<std::span<const std::byte>> FrameDecoder::inflate(std::span<const std::byte> file, const FrameInfo& frame,
                                                         std::string_view name) {
  if (frame.end_offset() > file.size()) {
    return Error{ErrorCode::kInternal,
                 fmt::format("{}: frame at offset {} lies past the end of the file", name, frame.offset)};
  }
  const auto compressed = file.subspan(frame.payload_offset(), frame.compressed_bytes);
  payload_.resize(frame.decompressed_bytes);
  const std::size_t got =
      ZSTD_decompressDCtx(dctx_, payload_.data(), payload_.size(), compressed.data(), compressed.size());
  const bool failed = ZSTD_isError(got) != 0;
  auto never_written = [&] {
    return Error{
        ErrorCode::kTruncated,
        fmt::format("{}: the frame at offset {} was never fully written (zero bytes to the end)", name, frame.offset)};
  };
  if (!failed && got == frame.decompressed_bytes) {
    const std::span<const std::byte> payload(payload_);
    if (frame.format_version >= 2 && payload.empty()) {
      // "MRFZ" and then zeros: sizes cut after a zero byte read 0 and 0, and
      // zstd has nothing to refuse. No writer makes a frame of 0 bytes.
      if (frame.compressed_bytes == 0 && frame.reaches_zero_tail) return never_written();
      return Error{ErrorCode::kCorrupt,
                   fmt::format("{}: corrupt frame at offset {}: no layout byte", name, frame.offset)};
    }
    return payload;
  }

  if (frame.reaches_zero_tail) return never_written();
  if (failed) {
    return Error{ErrorCode::kCorrupt, fmt::format("{}: corrupt frame at offset {}: zstd: {}; the file is damaged "
                                                  "from there on",
                                                  name, frame.offset, ZSTD_getErrorName(got))};
  }
  return Error{ErrorCode::kCorrupt,
               fmt::format("{}: corrupt frame at offset {}: it decompresses to {} bytes, its envelope says {}", name,
                           frame.offset, got, frame.decompressed_bytes)};
}

namespace {

Error unknown_layout(std::string_view name, const FrameInfo& frame, std::uint8_t layout) {
  return Error{ErrorCode::kCorrupt,
               fmt::format("{}: corrupt frame at offset {}: unknown layout {}", name, frame.offset, layout)};
}

}  // namespace

Result<std::span<const std::byte>> FrameDecoder::decompress(std::span<const std::byte> file, const FrameInfo& frame,
                                                            std::string_view name) {
  const auto payload = inflate(file, frame, name);
  if (!payload || frame.format_version < 2) return payload;
  const auto layout = static_cast<std::uint8_t>((*payload)[0]);
  if (layout == format::kLayoutRecords) return payload->subspan(1);
  if (!format::is_columns_layout(layout)) return unknown_layout(name, frame, layout);
  const Status joined = join_columns(payload->subspan(1), layout, records_, name, frame.offset);
  if (!joined) return joined.error();
  return std::span<const std::byte>(records_);
}

Status FrameDecoder::decode(std::span<const std::byte> file, const FrameInfo& frame, std::string_view name,
                            RecordVisitor& visitor) {
  const auto payload = inflate(file, frame, name);
  if (!payload) return payload.error();
  if (frame.format_version < 2) return decode_records(*payload, name, frame.offset, visitor);
  const auto layout = static_cast<std::uint8_t>((*payload)[0]);
  if (layout == format::kLayoutRecords) return decode_records(payload->subspan(1), name, frame.offset, visitor);
  if (!format::is_columns_layout(layout)) return unknown_layout(name, frame, layout);
  return decode_columns(payload->subspan(1), layout, name, frame.offset, visitor);
}

}  // namespace memrec::reader
