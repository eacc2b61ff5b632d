// The earliest heap or mapping event time of a frame, for the first pass of
// the analyzer's ordered replay (analyzer/load/ordered_events.cpp). A
// columns payload (version 2 or 3) keeps every time delta in its `dt` column (and a
// few in `rest`), so the times are read from those two columns and the tags
// alone, without rebuilding the addresses: that rebuild is most of a full
// decode. Anything else goes to the full decoder.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "memrec/reader/frame_decoder.h"
#include "memrec/reader/frame_index.h"

struct ZSTD_DCtx_s;

namespace memrec::reader {

inline constexpr std::uint64_t kNoEventTime = std::numeric_limits<std::uint64_t>::max();

// The earliest event time of a columns payload of `layout` (without its
// layout byte), kNoEventTime when it has no event; nothing when its tags,
// `dt` or `rest` do not parse: the caller then decodes the frame in full,
// whose verdict counts.
std::optional<std::uint64_t> earliest_in_columns(std::span<const std::byte> columns, std::uint8_t layout);

// One per worker thread: reuses its zstd context and buffer across frames.
class FrameTimeScanner {
 public:
  FrameTimeScanner();
  ~FrameTimeScanner();
  FrameTimeScanner(const FrameTimeScanner&) = delete;
  FrameTimeScanner& operator=(const FrameTimeScanner&) = delete;

  // The frame's earliest event time; kNoEventTime when it has none or does
  // not decode (the second pass stops at such a frame).
  std::uint64_t earliest(std::span<const std::byte> file, const FrameInfo& frame, std::string_view name);

 private:
  std::uint64_t earliest_by_decoding(std::span<const std::byte> file, const FrameInfo& frame, std::string_view name);

  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<std::byte> payload_;
  FrameDecoder decoder_;  // the fallback
};

}  // namespace memrec::reader
