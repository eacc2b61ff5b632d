// Walks the tags of a column payload and takes each time delta from `dt` or
// from its record's body in `rest`, as FORMAT.md "Columns" and "Delta state"
// lay them out; the other five columns are never read. Must agree with the
// full decoder on every frame that decodes (frame_times_test.cpp checks it);
// on one that does not, any answer is safe (analyzer/load/ordered_events.cpp).
#include "memrec/reader/frame_times.h"

#include <zstd.h>

#include <algorithm>

#include "memrec/format/frame_columns.h"
#include "memrec/format/records.h"
#include "memrec/format/varint.h"

namespace memrec::reader {
namespace {

using format::Tag;

// A bounds-checked cursor over one column; a failed read leaves `ok` false.
class ColumnCursor {
 public:
  explicit ColumnCursor(std::span<const std::byte> in = {}) : in_(in) {}
  bool ok() const { return ok_; }
  bool done() const { return pos_ >= in_.size(); }

  std::uint64_t varint() {
    const auto v = format::get_varint(in_.subspan(std::min(pos_, in_.size())));
    if (!v) {
      ok_ = false;
      return 0;
    }
    pos_ += v->size;
    return v->value;
  }
  std::uint8_t u8() {
    if (pos_ >= in_.size()) {
      ok_ = false;
      return 0;
    }
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  std::span<const std::byte> take(std::uint64_t n) {
    if (n > in_.size() - std::min(pos_, in_.size())) {
      ok_ = false;
      return {};
    }
    const auto out = in_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

class TimeWalk {
 public:
  std::uint64_t earliest = kNoEventTime;

  // False when a column runs short or a tag is unknown.
  bool run(ColumnCursor& tags, ColumnCursor& dt, ColumnCursor& rest) {
    while (!tags.done()) {
      const std::uint8_t tag = tags.u8();
      if (!record(tag, dt, rest) || !dt.ok() || !rest.ok()) return false;
    }
    return true;
  }

 private:
  void event(ColumnCursor& dt) {
    time_ = format::undelta(time_, dt.varint());
    earliest = std::min(earliest, time_);
  }
  // The allocation half of a Realloc or Mremap: an unsigned delta after the release.
  void then_alloc(ColumnCursor& dt) { time_ += dt.varint(); }

  bool record(std::uint8_t tag, ColumnCursor& dt, ColumnCursor& rest) {
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
  bool other(std::uint8_t tag, ColumnCursor& rest) {
    ColumnCursor body(rest.take(rest.varint()));
    switch (static_cast<Tag>(tag)) {
      case Tag::kThreadStart:
      case Tag::kThreadExit:
        body.varint();  // tid
        time_ = format::undelta(time_, body.varint());
        break;
      case Tag::kRss:
      case Tag::kRecording:
      case Tag::kEnd:
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

std::optional<std::uint64_t> earliest_in_columns(std::span<const std::byte> columns) {
  ColumnCursor dir(columns);
  if (dir.varint() != format::kColumnCount || !dir.ok()) return std::nullopt;
  std::array<std::uint64_t, format::kColumnCount> sizes{};
  for (std::uint64_t& size : sizes) size = dir.varint();
  if (!dir.ok()) return std::nullopt;
  std::array<ColumnCursor, format::kColumnCount> cols;
  for (std::size_t i = 0; i < format::kColumnCount; ++i) {
    cols[i] = ColumnCursor(dir.take(sizes[i]));
    if (!dir.ok()) return std::nullopt;
  }
  if (!dir.done()) return std::nullopt;
  const auto col = [&](format::Column c) -> ColumnCursor& { return cols[static_cast<std::size_t>(c)]; };
  TimeWalk walk;
  if (!walk.run(col(format::Column::kTags), col(format::Column::kDt), col(format::Column::kRest))) return std::nullopt;
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
      static_cast<std::uint8_t>(payload_[0]) != format::kLayoutColumns) {
    return earliest_by_decoding(file, frame, name);
  }
  const auto earliest = earliest_in_columns(std::span<const std::byte>(payload_).subspan(1));
  return earliest ? *earliest : earliest_by_decoding(file, frame, name);
}

std::uint64_t FrameTimeScanner::earliest_by_decoding(std::span<const std::byte> file, const FrameInfo& frame,
                                                     std::string_view name) {
  EarliestTime visitor;
  return decoder_.decode(file, frame, name, visitor).ok() ? visitor.earliest : kNoEventTime;
}

}  // namespace memrec::reader
