// Decodes a columns payload straight into records, without joining it into
// version 1's layout first: the analyzer's load decodes every frame, and the
// join's byte-by-byte rebuild and second parse were most of that work. Reads
// and checks the columns as frame_columns_join.cpp does (the same address
// decoder, the same messages); a record that has no columns of its own is
// decoded from its bytes in `rest` by the record decoder's own code.
#include <fmt/format.h>

#include "address_decoder.h"
#include "byte_reader.h"
#include "column_directory.h"
#include "memrec/format/frame_columns.h"
#include "memrec/reader/frame_decoder.h"
#include "record_body.h"

namespace memrec::reader {
namespace {

using format::AddressKind;
using format::Column;
using format::Tag;

class ColumnDecoder {
 public:
  ColumnDecoder(const detail::ColumnSpans& spans, std::uint8_t layout, RecordVisitor& visitor)
      : cols_{ByteReader(spans[0]), ByteReader(spans[1]), ByteReader(spans[2]),  ByteReader(spans[3]),
              ByteReader(spans[4]), ByteReader(spans[5]), ByteReader(spans[6]),  ByteReader(spans[7]),
              ByteReader(spans[8]), ByteReader(spans[9]), ByteReader(spans[10]), ByteReader(spans[11])},
        visitor_(visitor),
        addresses_(detail::address_decoder_for(layout)),
        split_(layout == format::kLayoutSplitColumns) {
    static_assert(format::kColumnCount == 12);
  }

  // Visits every record; an error message, or empty on success.
  std::string run() {
    ByteReader& tags = col(Column::kTags);
    for (std::uint64_t index = 0; !tags.at_end(); ++index) {
      const std::uint8_t tag = tags.u8();
      if (!record(tag)) {
        if (failure_.empty()) failure_ = fmt::format("record {:#04x} runs past its columns", tag);
        return failure_;
      }
    }
    for (std::size_t i = 0; i < format::kColumnCount; ++i) {
      if (!cols_[i].at_end()) return fmt::format("column {} has bytes no record uses", i);
    }
    return {};
  }

 private:
  ByteReader& col(Column c) { return cols_[static_cast<std::size_t>(c)]; }
  template <typename... C>
  bool ok(C... c) {
    return (col(c).ok() && ...) && (!split_ || (col(format::hi_column(c)).ok() && ...));
  }
  // A varint of column `c`: in layout 4 a split varint where the column is
  // split (frame_columns.h), whole otherwise.
  [[gnu::always_inline]] std::uint64_t field(Column c) {
    ByteReader& first = col(c);
    const Column hi = split_ ? format::hi_column(c) : c;
    if (hi == c) return first.varint();
    const std::uint8_t b = first.u8();
    if ((b & 0x80) == 0) return b;
    ByteReader& rest = col(hi);
    const auto value = format::join_split_varint(b, rest.varint());
    if (!value) rest.fail("a varint is longer than 64 bits");
    return value.value_or(0);
  }

  std::uint64_t time() { return state_.delta.time_ns = col(Column::kDt).delta_from(state_.delta.time_ns); }
  // dt_alloc of a Realloc or Mremap: unsigned, the allocation follows the release.
  std::uint64_t time_after(std::uint64_t release_ns) {
    return state_.delta.time_ns = release_ns + col(Column::kDt).varint();
  }
  [[gnu::always_inline]] std::uint64_t size() { return field(Column::kSize); }
  bool stack(StackId& out) {
    state_.delta.stack = col(Column::kStack).delta_from(state_.delta.stack);
    if (state_.delta.stack > UINT32_MAX) return fail("a stack id is over 32 bits");
    out = StackId{static_cast<std::uint32_t>(state_.delta.stack)};
    return true;
  }
  bool tid(std::uint64_t& out) {
    if (!state_.have_thread) return fail("an event comes before any Thread record");
    out = state_.tid;
    return true;
  }
  bool fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    return false;
  }

  // One address, rebuilt from addr_k and addr (FORMAT.md, "Columns"); an
  // allocation's `size` picks its class.
  [[gnu::always_inline]] bool address(AddressKind kind, std::uint64_t& out, std::uint64_t size = 0) {
    // Layout 4 keeps the codes of allocations apart from the others.
    const Column codes = split_ && kind == AddressKind::kAlloc ? Column::kAllocK : Column::kAddrK;
    const std::uint64_t k = field(codes);
    if (!ok(codes)) return false;
    std::uint64_t addr = 0;
    if (k == format::kAddrMissAligned || k == format::kAddrMissUnaligned) {
      const auto d = static_cast<std::uint64_t>(format::unzigzag(field(Column::kAddr)));
      if (!ok(Column::kAddr)) return false;
      addr = addresses_.miss_base(kind) + (k == format::kAddrMissAligned ? d << 4 : d);
      addresses_.missed(kind, addr, size);
    } else {
      if (!addresses_.named(kind, k, size, addr, failure_)) return false;
    }
    addresses_.seen(kind, addr, size);
    out = state_.delta.addr = addr;
    return true;
  }

  bool record(std::uint8_t tag) {
    if ((tag & format::kAllocTagMask) == static_cast<std::uint8_t>(Tag::kAllocBase) &&
        (tag & ~format::kAllocTagMask) < format::kAllocFnCount) {
      return alloc(tag);
    }
    switch (static_cast<Tag>(tag)) {
      case Tag::kThread:
        return thread();
      case Tag::kFree:
        return free();
      case Tag::kRealloc:
        return realloc();
      case Tag::kMmap:
        return mmap();
      case Tag::kMunmap:
        return munmap();
      case Tag::kMremap:
        return mremap();
      default:
        return whole_in_rest(tag);
    }
  }

  bool thread() {
    const ThreadRecord r{col(Column::kRest).varint()};
    if (!ok(Column::kRest)) return false;
    state_.have_thread = true;
    state_.tid = r.tid;
    visitor_.on_thread(r);
    return true;
  }

  bool alloc(std::uint8_t tag) {
    AllocRecord r;
    if (!tid(r.tid)) return false;
    r.fn = static_cast<format::AllocFn>(tag & ~format::kAllocTagMask);
    r.time_ns = time();
    r.size = size();  // before the address: it picks the address's class
    if (!ok(Column::kDt, Column::kSize) || !address(AddressKind::kAlloc, r.addr, r.size)) return false;
    if (!stack(r.stack) || !ok(Column::kStack)) return false;
    visitor_.on_alloc(r);
    return true;
  }

  bool free() {
    FreeRecord r;
    if (!tid(r.tid)) return false;
    r.time_ns = time();
    if (!ok(Column::kDt) || !address(AddressKind::kFree, r.addr)) return false;
    visitor_.on_free(r);
    return true;
  }

  bool realloc() {
    ReallocRecord r;
    if (!tid(r.tid)) return false;
    const std::uint8_t fn = col(Column::kRest).u8();
    if (!ok(Column::kRest)) return false;
    if (fn >= format::kAllocFnCount) return fail("a realloc names an unknown function");
    r.fn = static_cast<format::AllocFn>(fn);
    r.free_ns = time();
    if (!ok(Column::kDt) || !address(AddressKind::kFree, r.old_addr)) return false;
    r.alloc_ns = time_after(r.free_ns);
    r.size = size();
    if (!ok(Column::kDt, Column::kSize) || !address(AddressKind::kAlloc, r.new_addr, r.size)) return false;
    if (!stack(r.stack) || !ok(Column::kStack)) return false;
    visitor_.on_realloc(r);
    return true;
  }

  bool mmap() {
    MmapRecord r;
    if (!tid(r.tid)) return false;
    r.time_ns = time();
    if (!ok(Column::kDt) || !address(AddressKind::kPlain, r.addr)) return false;
    r.size = size();
    r.prot = col(Column::kRest).varint();
    r.flags = col(Column::kRest).varint();
    if (!stack(r.stack) || !ok(Column::kSize, Column::kRest, Column::kStack)) return false;
    visitor_.on_mmap(r);
    return true;
  }

  bool munmap() {
    MunmapRecord r;
    if (!tid(r.tid)) return false;
    r.time_ns = time();
    if (!ok(Column::kDt) || !address(AddressKind::kPlain, r.addr)) return false;
    r.size = size();
    if (!ok(Column::kSize)) return false;
    visitor_.on_munmap(r);
    return true;
  }

  bool mremap() {
    MremapRecord r;
    if (!tid(r.tid)) return false;
    r.free_ns = time();
    if (!ok(Column::kDt) || !address(AddressKind::kPlain, r.old_addr)) return false;
    r.old_size = size();
    r.alloc_ns = time_after(r.free_ns);
    if (!ok(Column::kDt) || !address(AddressKind::kPlain, r.new_addr)) return false;
    r.new_size = size();
    if (!stack(r.stack) || !ok(Column::kSize, Column::kStack)) return false;
    visitor_.on_mremap(r);
    return true;
  }

  // Any other record is its length and its body in `rest`.
  bool whole_in_rest(std::uint8_t tag) {
    ByteReader& rest = col(Column::kRest);
    const std::span<const std::byte> bytes = rest.take(rest.varint());
    if (!rest.ok()) return false;
    ByteReader body(bytes);
    if (!detail::decode_record_body(body, tag, state_, visitor_))
      return fail(fmt::format("unknown record tag {:#04x}", tag));
    if (!body.ok()) return fail(fmt::format("{} (record {:#04x})", body.failure(), tag));
    if (!body.at_end()) return fail(fmt::format("its length in rest is more than its body (record {:#04x})", tag));
    return true;
  }

  std::array<ByteReader, format::kColumnCount> cols_;
  RecordVisitor& visitor_;
  detail::DecodeState state_;
  detail::AddressDecoder& addresses_;
  bool split_;  // layout 4: split varints
  std::string failure_;
};

}  // namespace

Status decode_columns(std::span<const std::byte> payload, std::uint8_t layout, std::string_view name,
                      std::uint64_t frame_offset, RecordVisitor& visitor) {
  auto corrupt = [&](std::string_view why) {
    return Error{ErrorCode::kCorrupt, fmt::format("{}: corrupt frame at offset {}: {}", name, frame_offset, why)};
  };
  const auto columns = detail::split_directory(payload, layout);
  if (!columns) return corrupt("its column directory does not match its columns");
  ColumnDecoder decoder(*columns, layout, visitor);
  const std::string failure = decoder.run();
  if (!failure.empty()) return corrupt(failure);
  return {};
}

}  // namespace memrec::reader
