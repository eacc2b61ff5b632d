// The columns payload (FORMAT.md, "Columns"): the records of a frame split
// into seven columns before zstd, with each heap address coded, when it can
// be, by reference to an earlier address of the frame: by age from version 3
// (address_ages.h), by position in a ring of recently freed or allocated
// addresses in version 2. Addresses were most of a dump (a free's delta from
// the previous event's address is as random as the heap); zstd finds the
// repeats of a column of like fields and of small codes that it cannot find in
// interleaved varints (bench churn: 8.8 → 5.8 bytes per allocation with
// version 2's rings).
//
// The writer codes its records into the columns as it goes
// (column_encoder.h; allocation-free, into buffers it mapped); the reader
// decodes the columns directly (recorder-format/reader/column_decoder.cpp) or
// joins them back into the version-1 bytes (frame_columns_join.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include "memrec/format/address_ages.h"
#include "memrec/format/address_ring.h"
#include "memrec/format/byte_writer.h"
#include "memrec/format/records.h"
#include "memrec/format/varint.h"

namespace memrec::format {

// The first byte of a payload from version 2 on.
inline constexpr std::uint8_t kLayoutRecords = 0;      // the records follow as in version 1
inline constexpr std::uint8_t kLayoutColumns = 1;      // a column directory, then the columns (version 2's rings)
inline constexpr std::uint8_t kLayoutAgedColumns = 2;  // the same, addresses coded by age (version 3)
// The same, an allocation's miss taken from the carve point (version 4).
inline constexpr std::uint8_t kLayoutCarvedColumns = 3;
// The same codes, each kind of address code and each long field in columns
// of its own (version 5).
inline constexpr std::uint8_t kLayoutSplitColumns = 4;

// Whether a payload of `layout` holds columns (any but kLayoutRecords).
constexpr bool is_columns_layout(std::uint8_t layout) {
  return layout >= kLayoutColumns && layout <= kLayoutSplitColumns;
}

// How far an allocation of `size` bytes moves the carve point: glibc's chunk
// for it (the size and its 8-byte header, rounded up to 16, at least 32).
// An allocator that hands out fresh memory in address order (glibc from the
// top of its heap or from a split free chunk) puts the next new block there,
// so the miss is 0: python3's dump shrank by a fifth, sqlite3's by a tenth.
// Wrapping arithmetic: any size gives some point, and a wrong point costs
// bytes, never a wrong address.
constexpr std::uint64_t carve_step(std::uint64_t size) {
  const std::uint64_t chunk = (size + 23) & ~std::uint64_t{15};
  return chunk < 32 ? 32 : chunk;
}

// Layouts 1 to 3 have the first seven columns. Layout 4 has all twelve: its
// kAddrK holds the codes of releases and mapping addresses only, kAllocK
// those of allocations, and the address codes, miss deltas and sizes are
// *split varints*: a varint's first byte in its column, the rest of its bytes
// (if any) in the column's kHi partner. Each column then holds values of one
// distribution, which zstd's entropy coder, byte by byte, codes nearly as
// well as their own entropy: the first bytes of bench churn's free codes are
// as random as the heap, their high bytes are not (FORMAT.md, version 5).
enum class Column : std::uint8_t {
  kTags,
  kDt,
  kAddrK,
  kAddr,
  kSize,
  kStack,
  kRest,
  kAllocK,
  kAddrKHi,
  kAllocKHi,
  kAddrHi,
  kSizeHi,
};
inline constexpr std::size_t kColumnCount = 12;  // the most of any layout
inline constexpr std::size_t kUnsplitColumnCount = 7;

// A split varint's value from its first byte `first` (high bit set) and the
// varint `high` its partner column holds; nothing when they pass 64 bits.
constexpr std::optional<std::uint64_t> join_split_varint(std::uint8_t first, std::uint64_t high) {
  if (high >> 57 != 0) return std::nullopt;
  return (first & 0x7f) | high << 7;
}

// How many columns a payload of `layout` has.
constexpr std::size_t column_count(std::uint8_t layout) {
  return layout == kLayoutSplitColumns ? kColumnCount : kUnsplitColumnCount;
}

// Where a split varint of column `c` keeps its bytes after the first
// (layout 4); `c` itself for the columns that are not split.
constexpr Column hi_column(Column c) {
  switch (c) {
    case Column::kAddrK:
      return Column::kAddrKHi;
    case Column::kAllocK:
      return Column::kAllocKHi;
    case Column::kAddr:
      return Column::kAddrHi;
    case Column::kSize:
      return Column::kSizeHi;
    default:
      return c;
  }
}

// addr_k values: a miss whose delta is a multiple of 16 (stored shifted), any
// other miss, then codes that name an earlier address from kFirstRingSlot (=
// kFirstAgeCode) on.
inline constexpr std::uint64_t kAddrMissAligned = 0;
inline constexpr std::uint64_t kAddrMissUnaligned = 1;
inline constexpr std::uint64_t kFirstRingSlot = 2;

enum class AddressKind : std::uint8_t {
  kAlloc,  // an allocated block: looked up among the recently freed
  kFree,   // a released block: looked up among the recently allocated
  kPlain,  // mmap family: coded as a delta only
};

// Version 2's state, kept by both sides while walking one frame's addresses
// in order.
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
// can take. A length prefix per record in `rest` grows it, and an address code
// may take more bytes than the delta it stands for, but never more than twice
// the bytes of the record it is in (every record with an address has at least
// three, and a code is less than four times the frame's addresses).
constexpr std::size_t column_capacity(std::size_t record_bytes) { return 2 * record_bytes + 64; }

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
      const std::uint8_t flags = in.u8();
      std::uint64_t stored = in.varint();  // the depth
      if ((flags & kStackShared) != 0) stored -= std::min(stored, in.varint());
      for (std::uint64_t i = 0; i < stored && in.ok(); ++i) in.varint();
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
    case Tag::kExec:
      in.varint();
      in.varint();
      in.skip(in.varint());
      return true;
    case Tag::kMarker:
      in.varint();
      in.u8();
      in.skip(in.varint());
      return true;
    default:
      return false;
  }
}

}  // namespace detail

// One column buffer per Column, each of column_capacity(records) bytes.
using ColumnBuffers = std::array<std::span<std::byte>, kColumnCount>;

// Splits version-1 records into columns, a run of records at a time, into
// buffers the caller mapped; the address coding's state and the running
// version-1 address carry over from one run to the next, so a frame split in
// pieces gives the columns of the whole. The writer's ColumnEncoder
// (column_encoder.h) codes its hottest records straight into the columns and
// hands the others to add().
class ColumnSplitter {
 public:
  // `layout`: version 5's kLayoutSplitColumns, what the recorder writes; the
  // older layouts only tests still write: kLayoutCarvedColumns (version 4)
  // and kLayoutAgedColumns (version 3) with `ages`, kLayoutColumns (version
  // 2's rings) without. Layouts 2 to 4 need `ages`, layout 1 ignores it.
  ColumnSplitter(const ColumnBuffers& scratch, AgeCoder* ages, std::uint8_t layout = kLayoutSplitColumns)
      : cols_{ByteWriter(scratch[0]), ByteWriter(scratch[1]), ByteWriter(scratch[2]),  ByteWriter(scratch[3]),
              ByteWriter(scratch[4]), ByteWriter(scratch[5]), ByteWriter(scratch[6]),  ByteWriter(scratch[7]),
              ByteWriter(scratch[8]), ByteWriter(scratch[9]), ByteWriter(scratch[10]), ByteWriter(scratch[11])},
        ages_(layout == kLayoutColumns ? nullptr : ages),
        layout_(ages_ == nullptr ? kLayoutColumns : layout),
        carve_(layout_ == kLayoutCarvedColumns || layout_ == kLayoutSplitColumns),
        split_(layout_ == kLayoutSplitColumns) {
    static_assert(kColumnCount == 12);
    if (ages_ != nullptr) ages_->begin_frame();
  }

  // Empties the columns and forgets the addresses: a new frame.
  void reset() {
    for (ByteWriter& c : cols_) c.rewind(0);
    rings_ = {};
    if (ages_ != nullptr) ages_->begin_frame();
    previous_ = 0;
    carve_at_.reset();
    v1_addr_ = 0;
  }
  ByteWriter& col(Column c) { return cols_[static_cast<std::size_t>(c)]; }
  // The bytes in all columns.
  std::size_t size() const {
    std::size_t n = 0;
    for (const ByteWriter& c : cols_) n += c.size();
    return n;
  }
  // The address that version 1's next address delta is taken against
  // (FORMAT.md, "Delta state"): a caller that codes records itself sets it.
  void set_v1_addr(std::uint64_t addr) { v1_addr_ = addr; }

  // See AgeCoder::prefetch.
  void prefetch(std::uint64_t addr) const {
    if (ages_ != nullptr) ages_->prefetch(addr);
  }

  // Codes one heap or mapping address, as the split of its record does; an
  // allocation's `size` picks its size class (version 3).
  // kChecked false: the caller knows every column has room for a varint.
  template <bool kChecked = true>
  void address(AddressKind kind, std::uint64_t addr, std::uint64_t size) {
    switch (kind) {
      case AddressKind::kAlloc:
        return address_as<kChecked, AddressKind::kAlloc>(addr, size);
      case AddressKind::kFree:
        return address_as<kChecked, AddressKind::kFree>(addr, size);
      case AddressKind::kPlain:
        return address_as<kChecked, AddressKind::kPlain>(addr, size);
    }
  }
  // address() of an address of kind kKind, the writer's hot path: its
  // columns known when compiled (7.8 % fewer writer instructions on bench
  // churn than address() with the kind at run time).
  template <bool kChecked, AddressKind kKind>
  [[gnu::always_inline]] void address_as(std::uint64_t addr, std::uint64_t size) {
    std::uint64_t code = 0;
    if (ages_ != nullptr) {
      if constexpr (kKind == AddressKind::kAlloc) code = ages_->alloc(addr, size);
      if constexpr (kKind == AddressKind::kFree) code = ages_->free(addr);
    } else {
      code = ring_code(kKind, addr);
    }
    // Layout 4 keeps the codes of allocations apart from the others.
    constexpr Column kCodes = kKind == AddressKind::kAlloc ? Column::kAllocK : Column::kAddrK;
    if (code != 0) {
      put_codes<kChecked, kCodes>(code);
    } else {
      constexpr bool kCarvable = kKind == AddressKind::kAlloc;
      const bool carved = kCarvable && carve_;
      const std::uint64_t base = carved && carve_at_ ? *carve_at_ : previous_;
      const auto d = static_cast<std::int64_t>(addr - base);
      const bool aligned = (d & 15) == 0;
      put_codes<kChecked, kCodes>(aligned ? kAddrMissAligned : kAddrMissUnaligned);
      put_field<kChecked, Column::kAddr>(zigzag(aligned ? d >> 4 : d));
      if (carved) carve_at_ = addr + carve_step(size);
    }
    previous_ = addr;
  }
  // A varint of column `c`: split in layout 4 where hi_column(c) says so,
  // whole otherwise. kChecked false: the caller knows every column has room
  // for a varint.
  template <bool kChecked = true>
  void put(Column c, std::uint64_t v) {
    const Column hi = split_ ? hi_column(c) : c;
    if (hi != c) {
      put_split<kChecked>(c, hi, v);
    } else {
      put_whole<kChecked>(c, v);
    }
  }
  // put() of column kC, its partner known when compiled.
  template <bool kChecked, Column kC>
  [[gnu::always_inline]] void put_field(std::uint64_t v) {
    if constexpr (hi_column(kC) != kC) {
      if (split_) {
        put_split<kChecked>(kC, hi_column(kC), v);
        return;
      }
    }
    put_whole<kChecked>(kC, v);
  }
  // An address code of column kC (kAddrK or, in layout 4, kAllocK: the
  // other layouts have only kAddrK).
  template <bool kChecked, Column kC>
  [[gnu::always_inline]] void put_codes(std::uint64_t v) {
    if (split_) {
      put_split<kChecked>(kC, hi_column(kC), v);
    } else {
      put_whole<kChecked>(Column::kAddrK, v);
    }
  }
  // The varint's first byte in `c`, and the bytes LEB128 would write after
  // it, those of v >> 7, in `hi`.
  template <bool kChecked>
  [[gnu::always_inline]] void put_split(Column c, Column hi, std::uint64_t v) {
    const auto first = static_cast<std::uint8_t>((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if constexpr (kChecked) {
      col(c).u8(first);
      if (v >= 0x80) col(hi).varint(v >> 7);
    } else {
      col(c).u8_unchecked(first);
      if (v >= 0x80) col(hi).varint_unchecked(v >> 7);
    }
  }
  template <bool kChecked>
  [[gnu::always_inline]] void put_whole(Column c, std::uint64_t v) {
    if constexpr (kChecked) {
      col(c).varint(v);
    } else {
      col(c).varint_unchecked(v);
    }
  }
  // A varint's bytes as a record holds them, into column `c` (split as put()
  // would).
  void put_bytes(Column c, std::span<const std::byte> varint) {
    const Column hi = split_ ? hi_column(c) : c;
    if (hi == c || varint.empty()) {
      col(c).raw(varint);
      return;
    }
    col(c).raw(varint.first(1));
    col(hi).raw(varint.subspan(1));
  }

  // Splits whole records; false when they do not parse or a column is full
  // (the columns then hold part of them).
  bool add(std::span<const std::byte> records) {
    detail::RecordCursor in(records);
    auto copy = [&](Column c) { put_bytes(c, in.varint_bytes()); };
    auto next_address = [&](AddressKind kind) {
      v1_addr_ = undelta(v1_addr_, in.varint());
      address(kind, v1_addr_, 0);
    };
    // An allocation's address and then its size: the size picks the
    // address's class, so it is read first.
    auto alloc_address_and_size = [&] {
      v1_addr_ = undelta(v1_addr_, in.varint());
      const std::span<const std::byte> size = in.varint_bytes();
      put_bytes(Column::kSize, size);
      const auto value = get_varint(size);
      address(AddressKind::kAlloc, v1_addr_, value ? value->value : 0);
    };
    while (!in.done() && in.ok()) {
      const std::uint8_t tag = in.u8();
      col(Column::kTags).u8(tag);
      if ((tag & kAllocTagMask) == static_cast<std::uint8_t>(Tag::kAllocBase)) {
        copy(Column::kDt);
        alloc_address_and_size();
        copy(Column::kStack);
        continue;
      }
      switch (static_cast<Tag>(tag)) {
        case Tag::kThread:
          copy(Column::kRest);
          break;
        case Tag::kFree:
          copy(Column::kDt);
          next_address(AddressKind::kFree);
          break;
        case Tag::kRealloc:
          col(Column::kRest).u8(in.u8());
          copy(Column::kDt);
          next_address(AddressKind::kFree);
          copy(Column::kDt);
          alloc_address_and_size();
          copy(Column::kStack);
          break;
        case Tag::kMmap:
          copy(Column::kDt);
          next_address(AddressKind::kPlain);
          copy(Column::kSize);
          copy(Column::kRest);
          copy(Column::kRest);
          copy(Column::kStack);
          break;
        case Tag::kMunmap:
          copy(Column::kDt);
          next_address(AddressKind::kPlain);
          copy(Column::kSize);
          break;
        case Tag::kMremap:
          copy(Column::kDt);
          next_address(AddressKind::kPlain);
          copy(Column::kSize);
          copy(Column::kDt);
          next_address(AddressKind::kPlain);
          copy(Column::kSize);
          copy(Column::kStack);
          break;
        default: {
          const std::size_t start = in.pos();
          if (!detail::skip_body(tag, in) || !in.ok()) return false;
          col(Column::kRest).bytes(in.since(start));
        }
      }
    }
    if (!in.ok()) return false;
    for (const ByteWriter& c : cols_) {
      if (!c.ok()) return false;
    }
    return true;
  }

  // Writes the columns payload to `out`; returns its size, or 0 when `out`
  // is too small or a column overflowed.
  // `ends` (if given, kColumnCount long): where each column ends in the
  // payload, 0 for those the layout does not have.
  std::size_t finish(std::span<std::byte> out, std::size_t* ends = nullptr) const {
    ByteWriter w(out);
    const std::size_t n = column_count(layout_);
    w.u8(layout_);
    w.varint(n);
    for (std::size_t i = 0; i < kColumnCount; ++i) {
      if (!cols_[i].ok() || (i >= n && cols_[i].size() != 0)) return 0;
      if (i < n) w.varint(cols_[i].size());
    }
    for (std::size_t i = 0; i < n; ++i) {
      w.raw(cols_[i].written());
      if (ends != nullptr) ends[i] = w.size();
    }
    for (std::size_t i = n; ends != nullptr && i < kColumnCount; ++i) ends[i] = 0;
    return w.ok() ? w.size() : 0;
  }

 private:
  // Version 2's code of `addr` (0: not in its ring), and its rings' update.
  std::uint64_t ring_code(AddressKind kind, std::uint64_t addr) {
    AddressRing* ring = rings_.ring_for(kind);
    const std::optional<std::uint32_t> hit = ring != nullptr ? ring->find(addr) : std::nullopt;
    if (hit) ring->remove(*hit);
    rings_.seen(kind, addr);
    return hit ? kFirstRingSlot + *hit : 0;
  }

  std::array<ByteWriter, kColumnCount> cols_;
  AgeCoder* ages_;
  std::uint8_t layout_;
  bool carve_;
  bool split_;
  AddressCoderState rings_;
  std::uint64_t previous_ = 0;  // the last address coded, of any kind
  // Where the next fresh block would start: after the frame's last
  // allocation coded as a miss (version 4).
  std::optional<std::uint64_t> carve_at_;
  std::uint64_t v1_addr_ = 0;  // version 1's running address (FORMAT.md, "Delta state")
};

// Splits a frame's version-1 `records` into a columns payload of `layout` in
// `out` (see ColumnSplitter). Returns its size, or 0 when the records do not
// parse or a buffer is too small.
inline std::size_t split_columns(std::span<const std::byte> records, const ColumnBuffers& scratch,
                                 std::span<std::byte> out, AgeCoder* ages, std::uint8_t layout = kLayoutSplitColumns) {
  ColumnSplitter splitter(scratch, ages, layout);
  return splitter.add(records) ? splitter.finish(out) : 0;
}

}  // namespace memrec::format
