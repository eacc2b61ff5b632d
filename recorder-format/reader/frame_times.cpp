// Walks the tags of a column payload and takes each time delta from `dt` or
// from its record's body in `rest`, as FORMAT.md "Columns" and "Delta state"
// lay them out; the other columns are never read. Must agree with the
// full decoder on every frame that decodes (frame_times_test.cpp checks it);
// on one that does not, any answer is safe (analyzer/load/ordered_events.cpp).
#include "memrec/reader/frame_times.h"

#include <zstd.h>

#include <algorithm>

#include "byte_reader.h"
#include "column_directory.h"
#include "memrec/format/frame_columns.h"
#include "memrec/format/records.h"
#include "memrec/format/varint.h"

namespace memrec::reader {
namespace {

using format::Tag;

class TimeWalk {
 public:
  std::uint64_t earliest = kNoEventTime;

  // False when a column runs short or a tag is unknown.
  bool run(ByteReader& tags, ByteReader& dt, ByteReader& rest) {
    while (!tags.at_end()) {
      const std::uint8_t tag = tags.u8();
      if (!record(tag, dt, rest) || !dt.ok() || !rest.ok()) return false;
    }
    return true;
  }

 private:
  void event(ByteReader& dt) {
    time_ = format::undelta(time_, dt.varint());
    earliest = std::min(earliest, time_);
  }
  // The allocation half of a Realloc or Mremap: an unsigned delta after the release.
  void then_alloc(ByteReader& dt) { time_ += dt.varint(); }

  bool record(std::uint8_t tag, ByteReader& dt, ByteReader& rest) {
    if ((tag & format::kAllocTagMask) == static_cast<std::uint8_t>(Tag::kAllocBase)) {
      if ((tag & ~format::kAllocTagMask) >= format::kAllocFnCount) return false;
      event(dt);
      return true;
    }
    switch (static_cast<Tag>(tag)) {
      case Tag::kThread:
        rest.varint();
        return true;
      case Tag::kFree:
      case Tag::kMunmap:
        event(dt);
        return true;
      case Tag::kRealloc:
        rest.u8();
        event(dt);
        then_alloc(dt);
        return true;
      case Tag::kMmap:
        event(dt);
        rest.varint();  // prot
        rest.varint();  // flags
        return true;
      case Tag::kMremap:
        event(dt);
        then_alloc(dt);
        return true;
      default:
        return other(tag, rest);
    }
  }

  // A record whole in `rest`: a length, then its body as in FORMAT.md "Records".
  bool other(std::uint8_t tag, ByteReader& rest) {
    ByteReader body(rest.take(rest.varint()));
    switch (static_cast<Tag>(tag)) {
      case Tag::kThreadStart:
      case Tag::kThreadExit:
        body.varint();  // tid
        time_ = format::undelta(time_, body.varint());
        break;
      case Tag::kRss:
      case Tag::kRecording:
      case Tag::kEnd:
      case Tag::kExec:
      case Tag::kMarker:
        time_ = format::undelta(time_, body.varint());
        break;
      case Tag::kStack:
      case Tag::kModuleLoad:
      case Tag::kModuleUnload:
      case Tag::kThreadName:
      case Tag::kCounters:
        break;
      default:
        return false;
    }
    return body.ok();
  }

  std::uint64_t time_ = 0;  // FORMAT.md "Delta state": 0 at the frame's start
};

}  // namespace

std::optional<std::uint64_t> earliest_in_columns(std::span<const std::byte> columns, std::uint8_t layout) {
  const auto spans = detail::split_directory(columns, layout);
  if (!spans) return std::nullopt;
  const auto col = [&](format::Column c) { return ByteReader((*spans)[static_cast<std::size_t>(c)]); };
  ByteReader tags = col(format::Column::kTags);
  ByteReader dt = col(format::Column::kDt);
  ByteReader rest = col(format::Column::kRest);
  TimeWalk walk;
  if (!walk.run(tags, dt, rest)) return std::nullopt;
  return walk.earliest;
}

namespace {

// The full decoder's answer: what the first pass did before the scan.
class EarliestTime final : public RecordVisitor {
 public:
  std::uint64_t earliest = kNoEventTime;
  void on_alloc(const AllocRecord& r) override { saw(r.time_ns); }
  void on_free(const FreeRecord& r) override { saw(r.time_ns); }
  void on_realloc(const ReallocRecord& r) override { saw(std::min(r.free_ns, r.alloc_ns)); }
  void on_mmap(const MmapRecord& r) override { saw(r.time_ns); }
  void on_munmap(const MunmapRecord& r) override { saw(r.time_ns); }
  void on_mremap(const MremapRecord& r) override { saw(std::min(r.free_ns, r.alloc_ns)); }

 private:
  void saw(std::uint64_t t) { earliest = std::min(earliest, t); }
};

}  // namespace

FrameTimeScanner::FrameTimeScanner() : dctx_(ZSTD_createDCtx()) {}

FrameTimeScanner::~FrameTimeScanner() { ZSTD_freeDCtx(dctx_); }

std::uint64_t FrameTimeScanner::earliest(std::span<const std::byte> file, const FrameInfo& frame,
                                         std::string_view name) {
  if (dctx_ == nullptr || frame.format_version < 2 || frame.end_offset() > file.size()) {
    return earliest_by_decoding(file, frame, name);
  }
  payload_.resize(frame.decompressed_bytes);
  const auto compressed = file.subspan(frame.payload_offset(), frame.compressed_bytes);
  const std::size_t got =
      ZSTD_decompressDCtx(dctx_, payload_.data(), payload_.size(), compressed.data(), compressed.size());
  if (ZSTD_isError(got) != 0 || got != frame.decompressed_bytes || got == 0 ||
      !format::is_columns_layout(static_cast<std::uint8_t>(payload_[0]))) {
    return earliest_by_decoding(file, frame, name);
  }
  const auto earliest =
      earliest_in_columns(std::span<const std::byte>(payload_).subspan(1), static_cast<std::uint8_t>(payload_[0]));
  return earliest ? *earliest : earliest_by_decoding(file, frame, name);
}

std::uint64_t FrameTimeScanner::earliest_by_decoding(std::span<const std::byte> file, const FrameInfo& frame,
                                                     std::string_view name) {
  EarliestTime visitor;
  return decoder_.decode(file, frame, name, visitor).ok() ? visitor.earliest : kNoEventTime;
}

}  // namespace memrec::reader
