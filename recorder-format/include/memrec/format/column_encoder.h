// Codes a frame's records straight into version 5's columns (FORMAT.md,
// "Columns"), for the preload's writer thread: the bytes are those that
// splitting RecordEncoder's version-1 records gives (split_columns), without
// writing and parsing them again. Alloc and Free, nearly every record, are
// coded here field by field; any other record is encoded by a RecordEncoder
// into `scratch` and split. Allocation-free. Like RecordEncoder, each method
// writes a whole record or nothing and returns false when the frame is full.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "memrec/format/frame_columns.h"
#include "memrec/format/record_encoder.h"
#include "memrec/format/records.h"
#include "memrec/format/varint.h"

namespace memrec::format {

class ColumnEncoder {
 public:
  // `columns`: kColumnCount buffers of one size, which bounds the frame;
  // `scratch`: room for the largest record other than Alloc and Free;
  // `ages`: the address coding's tables.
  ColumnEncoder(const ColumnBuffers& columns, std::span<std::byte> scratch, AgeCoder& ages)
      : split_(columns, &ages), other_(scratch), capacity_(columns[0].size()) {}

  // The bytes in the columns.
  std::size_t size() const { return split_.size(); }
  // Whether the columns hold at least `bytes`; cheaper than size() while
  // they hold much less.
  bool holds_at_least(std::size_t bytes) {
    if (bound_ < bytes) return false;
    bound_ = size();
    return bound_ >= bytes;
  }
  void begin_frame() {
    split_.reset();
    state_ = {};
    bound_ = 0;
    last_stack_depth_ = 0;
  }

  // An address a coming alloc() or free() will code (AgeCoder::prefetch).
  void prefetch(std::uint64_t addr) const { split_.prefetch(addr); }

  bool alloc(AllocFn fn, std::uint64_t time_ns, std::uint64_t addr, std::uint64_t size, std::uint32_t stack) {
    if (!room(kMaxFastRecord)) return false;
    split_.col(Column::kTags).u8_unchecked(static_cast<std::uint8_t>(Tag::kAllocBase) | static_cast<std::uint8_t>(fn));
    split_.put_field<false, Column::kDt>(delta(state_.time_ns, time_ns));
    split_.address_as<false, AddressKind::kAlloc>(addr, size);
    split_.put_field<false, Column::kSize>(size);
    split_.put_field<false, Column::kStack>(delta(state_.stack, stack));
    state_ = DeltaState{time_ns, addr, stack};
    bound_ += kMaxFastRecord;
    return true;
  }
  bool free(std::uint64_t time_ns, std::uint64_t addr) {
    if (!room(kMaxFastRecord)) return false;
    split_.col(Column::kTags).u8_unchecked(static_cast<std::uint8_t>(Tag::kFree));
    split_.put_field<false, Column::kDt>(delta(state_.time_ns, time_ns));
    split_.address_as<false, AddressKind::kFree>(addr, 0);
    state_.time_ns = time_ns;
    state_.addr = addr;
    bound_ += kMaxFastRecord;
    return true;
  }
  // Any record: `encode(RecordEncoder&)` writes it as RecordEncoder does.
  template <typename Encode>
  bool record(Encode&& encode) {
    other_.restart(state_);
    if (!encode(other_)) return false;
    const std::span<const std::byte> bytes = other_.written();
    if (!room(bytes.size() + kSplitGrowth)) return false;
    split_.set_v1_addr(state_.addr);
    // Cannot fail: RecordEncoder's bytes always parse, and every column has
    // the room checked above.
    if (!split_.add(bytes)) return false;
    state_ = other_.state();
    bound_ = size();
    return true;
  }
  // A Stack record, sharing its outer frames with the frame's previous one
  // (RecordEncoder::stack).
  bool stack(std::uint32_t id, std::uint64_t module_gen, std::uint8_t flags, std::span<const std::uint64_t> ips) {
    if (ips.size() > kMaxStackDepth) return false;
    const std::span<const std::uint64_t> previous(last_stack_, last_stack_depth_);
    if (!record([&](RecordEncoder& r) { return r.stack(id, module_gen, flags, ips, previous); })) return false;
    std::copy(ips.begin(), ips.end(), last_stack_);
    last_stack_depth_ = ips.size();
    return true;
  }

  // Writes the frame's columns payload; its size, or 0 if `out` is
  // too small. `ends`: see ColumnSplitter::finish.
  std::size_t finish(std::span<std::byte> out, std::size_t* ends = nullptr) const { return split_.finish(out, ends); }

 private:
  // An Alloc's fields: a tag, four varints and an address code.
  static constexpr std::size_t kMaxFastRecord = 2 + 5 * kMaxVarintBytes;
  // What a split record may add to its own size: per address (Realloc has
  // two) an address code and a delta as long as 64 bits make it.
  static constexpr std::size_t kSplitGrowth = 2 * (1 + kMaxVarintBytes) + 8;

  // Every column is at most the sum of all, so this much room in the sum
  // leaves it in each column. The sum is counted again only when the bound
  // says the room may be gone: seven loads per record were a tenth of the
  // writer's time.
  bool room(std::size_t bytes) {
    if (bound_ + bytes <= capacity_) return true;
    bound_ = size();
    return bound_ + bytes <= capacity_;
  }

  ColumnSplitter split_;
  RecordEncoder other_;
  DeltaState state_;
  std::size_t capacity_;
  std::size_t bound_ = 0;  // at least size(): the last count plus each fast record's largest size
  std::uint64_t last_stack_[kMaxStackDepth] = {};  // the frame's previous Stack record's frames
  std::size_t last_stack_depth_ = 0;
};

}  // namespace memrec::format
