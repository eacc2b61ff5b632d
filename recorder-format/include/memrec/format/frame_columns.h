// Version 2's frame payload (FORMAT.md, "Columns"): the records of a frame
// split into seven columns before zstd, with each heap address coded as a
// position in a ring of recently freed or recently allocated addresses when
// it is one. Addresses were most of a dump (a free's delta from the previous
// event's address is as random as the heap); zstd finds the repeats of a
// column of like fields and of small ring positions that it cannot find in
// interleaved varints (bench churn: 8.8 → 5.8 bytes per allocation).
//
// The writer encodes version-1 records as before and splits them here at
// flush time (allocation-free, into buffers the caller mapped); the reader
// joins the columns back into the same version-1 bytes
// (recorder-format/reader/frame_columns_join.cpp) and decodes those, so the
// record decoder knows one layout only.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "memrec/format/byte_writer.h"
#include "memrec/format/records.h"
#include "memrec/format/varint.h"

namespace memrec::format {

// The first byte of a version-2 payload.
inline constexpr std::uint8_t kLayoutRecords = 0;  // the records follow as in version 1
inline constexpr std::uint8_t kLayoutColumns = 1;  // a column directory, then the columns

enum class Column : std::uint8_t { kTags, kDt, kAddrK, kAddr, kSize, kStack, kRest };
inline constexpr std::size_t kColumnCount = 7;

// addr_k values: a miss whose delta is a multiple of 16 (stored shifted), any
// other miss, then ring positions from kFirstRingSlot on.
inline constexpr std::uint64_t kAddrMissAligned = 0;
inline constexpr std::uint64_t kAddrMissUnaligned = 1;
inline constexpr std::uint64_t kFirstRingSlot = 2;
inline constexpr std::uint32_t kAddressRingSlots = 32;

enum class AddressKind : std::uint8_t {
  kAlloc,  // an allocated block: looked up among the recently freed
  kFree,   // a released block: looked up among the recently allocated
  kPlain,  // mmap family: coded as a delta only
};

// Most recent first; a hit leaves the ring, so one address is in a ring once.
struct AddressRing {
  std::array<std::uint64_t, kAddressRingSlots> slots{};
  std::uint32_t count = 0;

  std::optional<std::uint32_t> find(std::uint64_t addr) const {
    for (std::uint32_t i = 0; i < count; ++i) {
      if (slots[i] == addr) return i;
    }
    return std::nullopt;
  }
  void remove(std::uint32_t i) {
    std::memmove(&slots[i], &slots[i + 1], (count - i - 1) * sizeof(std::uint64_t));
    --count;
  }
  void push(std::uint64_t addr) {
    const std::uint32_t kept = count < kAddressRingSlots ? count : kAddressRingSlots - 1;
    std::memmove(&slots[1], &slots[0], kept * sizeof(std::uint64_t));
    slots[0] = addr;
    count = kept + 1;
  }
};

// The state both sides keep while walking one frame's addresses, in order.
struct AddressCoderState {
  AddressRing freed;
  AddressRing allocated;
  std::uint64_t previous = 0;  // the last address coded, of any kind

  AddressRing* ring_for(AddressKind kind) {
    if (kind == AddressKind::kAlloc) return &freed;
    if (kind == AddressKind::kFree) return &allocated;
    return nullptr;
  }
  void seen(AddressKind kind, std::uint64_t addr) {
    previous = addr;
    if (kind == AddressKind::kAlloc) allocated.push(addr);
    if (kind == AddressKind::kFree) freed.push(addr);
  }
};

// Column i's capacity for a frame of `record_bytes`: what any column of it
// can take (a length prefix per record in `rest` is the only growth).
constexpr std::size_t column_capacity(std::size_t record_bytes) { return record_bytes + record_bytes / 64 + 64; }

namespace detail {

// Walks version-1 records; every read is bounds-checked and `ok` turns false
// on any malformed input (the writer then falls back to kLayoutRecords).
class RecordCursor {
 public:
  explicit RecordCursor(std::span<const std::byte> in) : in_(in) {}
  bool ok() const { return ok_; }
  bool done() const { return pos_ >= in_.size(); }
  std::size_t pos() const { return pos_; }
  std::span<const std::byte> since(std::size_t start) const { return in_.subspan(start, pos_ - start); }

  std::uint8_t u8() {
    if (!ok_ || pos_ >= in_.size()) return fail();
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  std::uint64_t varint() {
    if (!ok_) return 0;
    const auto v = get_varint(in_.subspan(pos_));
    if (!v) return fail();
    pos_ += v->size;
    return v->value;
  }
  // A varint's bytes, unchanged.
  std::span<const std::byte> varint_bytes() {
    const std::size_t start = pos_;
    varint();
    return ok_ ? since(start) : std::span<const std::byte>{};
  }
  void skip(std::uint64_t n) {
    if (!ok_ || n > in_.size() - pos_) {
      fail();
      return;
    }
    pos_ += n;
  }

 private:
  std::uint8_t fail() {
    ok_ = false;
    return 0;
  }
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

// Skips the body of a record that goes to `rest` whole; false for a tag it
// does not know.
inline bool skip_body(std::uint8_t tag, RecordCursor& in) {
  switch (static_cast<Tag>(tag)) {
    case Tag::kStack: {
      in.varint();
      in.varint();
      in.u8();
      const std::uint64_t depth = in.varint();
      for (std::uint64_t i = 0; i < depth && in.ok(); ++i) in.varint();
      return true;
    }
    case Tag::kModuleLoad: {
      in.varint();
      in.varint();
      in.skip(in.varint());  // path
      in.varint();
      in.skip(in.varint());  // build id
      const std::uint64_t n = in.varint();
      for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
        in.varint();
        in.varint();
        in.varint();
        in.u8();
      }
      return true;
    }
    case Tag::kThreadStart:
      in.varint();
      in.varint();
      in.skip(in.varint());
      return true;
    case Tag::kThreadName:
      in.varint();
      in.skip(in.varint());
      return true;
    case Tag::kModuleUnload:
    case Tag::kThreadExit:
    case Tag::kRss:
      in.varint();
      in.varint();
      return true;
    case Tag::kRecording:
      in.varint();
      in.u8();
      return true;
    case Tag::kCounters: {
      const std::uint64_t n = in.varint();
      for (std::uint64_t i = 0; i < n && in.ok(); ++i) {
        in.varint();
        in.varint();
      }
      return true;
    }
    case Tag::kEnd:
      in.varint();
      return true;
    default:
      return false;
  }
}

}  // namespace detail

// One column buffer per Column, each of column_capacity(records) bytes.
using ColumnBuffers = std::array<std::span<std::byte>, kColumnCount>;

// Splits a frame's version-1 `records` into a kLayoutColumns payload in
// `out`. Returns its size, or 0 when the records do not parse or a buffer is
// too small; the caller then writes kLayoutRecords and the records instead.
inline std::size_t split_columns(std::span<const std::byte> records, const ColumnBuffers& scratch,
                                 std::span<std::byte> out) {
  std::array<ByteWriter, kColumnCount> cols = {ByteWriter(scratch[0]), ByteWriter(scratch[1]), ByteWriter(scratch[2]),
                                               ByteWriter(scratch[3]), ByteWriter(scratch[4]), ByteWriter(scratch[5]),
                                               ByteWriter(scratch[6])};
  auto col = [&](Column c) -> ByteWriter& { return cols[static_cast<std::size_t>(c)]; };
  detail::RecordCursor in(records);
  AddressCoderState coder;
  std::uint64_t v1_addr = 0;  // version 1's running address (FORMAT.md, "Delta state")

  auto copy = [&](Column c) { col(c).raw(in.varint_bytes()); };
  auto address = [&](AddressKind kind) {
    v1_addr = undelta(v1_addr, in.varint());
    AddressRing* ring = coder.ring_for(kind);
    const std::optional<std::uint32_t> hit = ring != nullptr ? ring->find(v1_addr) : std::nullopt;
    if (hit) {
      col(Column::kAddrK).varint(kFirstRingSlot + *hit);
      ring->remove(*hit);
    } else {
      const auto d = static_cast<std::int64_t>(v1_addr - coder.previous);
      const bool aligned = (d & 15) == 0;
      col(Column::kAddrK).varint(aligned ? kAddrMissAligned : kAddrMissUnaligned);
      col(Column::kAddr).zz(aligned ? d >> 4 : d);
    }
    coder.seen(kind, v1_addr);
  };

  while (!in.done() && in.ok()) {
    const std::uint8_t tag = in.u8();
    col(Column::kTags).u8(tag);
    if ((tag & kAllocTagMask) == static_cast<std::uint8_t>(Tag::kAllocBase)) {
      copy(Column::kDt);
      address(AddressKind::kAlloc);
      copy(Column::kSize);
      copy(Column::kStack);
      continue;
    }
    switch (static_cast<Tag>(tag)) {
      case Tag::kThread:
        copy(Column::kRest);
        break;
      case Tag::kFree:
        copy(Column::kDt);
        address(AddressKind::kFree);
        break;
      case Tag::kRealloc:
        col(Column::kRest).u8(in.u8());
        copy(Column::kDt);
        address(AddressKind::kFree);
        copy(Column::kDt);
        address(AddressKind::kAlloc);
        copy(Column::kSize);
        copy(Column::kStack);
        break;
      case Tag::kMmap:
        copy(Column::kDt);
        address(AddressKind::kPlain);
        copy(Column::kSize);
        copy(Column::kRest);
        copy(Column::kRest);
        copy(Column::kStack);
        break;
      case Tag::kMunmap:
        copy(Column::kDt);
        address(AddressKind::kPlain);
        copy(Column::kSize);
        break;
      case Tag::kMremap:
        copy(Column::kDt);
        address(AddressKind::kPlain);
        copy(Column::kSize);
        copy(Column::kDt);
        address(AddressKind::kPlain);
        copy(Column::kSize);
        copy(Column::kStack);
        break;
      default: {
        const std::size_t start = in.pos();
        if (!detail::skip_body(tag, in) || !in.ok()) return 0;
        col(Column::kRest).bytes(in.since(start));
      }
    }
  }
  if (!in.ok()) return 0;
  ByteWriter w(out);
  w.u8(kLayoutColumns);
  w.varint(kColumnCount);
  for (const ByteWriter& c : cols) {
    if (!c.ok()) return 0;
    w.varint(c.size());
  }
  for (const ByteWriter& c : cols) w.raw(c.written());
  return w.ok() ? w.size() : 0;
}

}  // namespace memrec::format
