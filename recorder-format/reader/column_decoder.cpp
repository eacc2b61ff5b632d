// Decodes a columns payload straight into records, without joining it into
// version 1's layout first: the analyzer's load decodes every frame, and the
// join's byte-by-byte rebuild and second parse were most of that work. Reads
// and checks the columns as frame_columns_join.cpp does (the same address
// decoder, the same messages); a record that has no columns of its own is
// decoded from its bytes in `rest` by the record decoder's own code.
#include <fmt/format.h>

#include "address_decoder.h"
#include "byte_reader.h"
#include "column_cursor.h"
#include "column_directory.h"
#include "memrec/format/frame_columns.h"
#include "memrec/reader/frame_decoder.h"
#include "record_body.h"

namespace memrec::reader {
namespace {

using format::AddressKind;
using format::Column;
using format::Tag;

// kSplit: layout 4, whose codes, miss deltas and sizes are split varints;
// compiled apart, so that no field asks which layout it reads.
template <bool kSplit>
class ColumnDecoder {
 public:
  ColumnDecoder(const detail::ColumnSpans& spans, std::uint8_t layout, RecordVisitor& visitor)
      : visitor_(visitor), addresses_(detail::address_decoder_for(layout)) {
    static_assert(format::kColumnCount == 12);
    for (std::size_t i = 0; i < format::kColumnCount; ++i) cols_[i] = detail::ColumnCursor(spans[i]);
  }

  // Visits every record; an error message, or empty on success.
  std::string run() {
    detail::ColumnCursor& tags = col(Column::kTags);
    while (!tags.at_end()) {
      const std::uint8_t tag = tags.u8(failed_);
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
  detail::ColumnCursor& col(Column c) { return cols_[static_cast<std::size_t>(c)]; }
  // Every read so far was within its column and its 64 bits.
  bool ok() const { return !failed_; }
  // A varint of column kC: a split varint where layout 4 splits the column
  // (frame_columns.h), whole otherwise.
  template <Column kC>
  [[gnu::always_inline]] std::uint64_t field() {
    if constexpr (!kSplit || format::hi_column(kC) == kC) {
      return col(kC).varint(failed_);
    } else {
      const std::uint8_t b = col(kC).u8(failed_);
      if ((b & 0x80) == 0) [[likely]]
        return b;
      const auto value = format::join_split_varint(b, col(format::hi_column(kC)).varint(failed_));
      if (!value) failed_ = true;
      return value.value_or(0);
    }
  }

  std::uint64_t time() {
    return state_.delta.time_ns = format::undelta(state_.delta.time_ns, col(Column::kDt).varint(failed_));
  }
  // dt_alloc of a Realloc or Mremap: unsigned, the allocation follows the release.
  std::uint64_t time_after(std::uint64_t release_ns) {
    return state_.delta.time_ns = release_ns + col(Column::kDt).varint(failed_);
  }
  [[gnu::always_inline]] std::uint64_t size() { return field<Column::kSize>(); }
  [[gnu::always_inline]] bool stack(StackId& out) {
    state_.delta.stack = format::undelta(state_.delta.stack, col(Column::kStack).varint(failed_));
    if (state_.delta.stack > UINT32_MAX) return fail("a stack id is over 32 bits");
    out = StackId{static_cast<std::uint32_t>(state_.delta.stack)};
    return true;
  }
  bool tid(std::uint64_t& out) {
    if (!state_.have_thread) return fail("an event comes before any Thread record");
    out = state_.tid;
    return true;
  }
  [[gnu::cold, gnu::noinline]] bool fail(std::string why) {
    if (failure_.empty()) failure_ = std::move(why);
    return false;
  }

  // One address of kKind, rebuilt from addr_k and addr (FORMAT.md,
  // "Columns"); an allocation's `size` picks its class.
  template <AddressKind kKind>
  [[gnu::always_inline]] bool address(std::uint64_t& out, std::uint64_t size = 0) {
    // Layout 4 keeps the codes of allocations apart from the others.
    constexpr Column kCodes = kSplit && kKind == AddressKind::kAlloc ? Column::kAllocK : Column::kAddrK;
    const std::uint64_t k = field<kCodes>();
    if (!ok()) return false;
    std::uint64_t addr = 0;
    if (k == format::kAddrMissAligned || k == format::kAddrMissUnaligned) {
      const auto d = static_cast<std::uint64_t>(format::unzigzag(field<Column::kAddr>()));
      if (!ok()) return false;
      addr = addresses_.miss_base(kKind) + (k == format::kAddrMissAligned ? d << 4 : d);
      addresses_.missed(kKind, addr, size);
    } else {
      if (!addresses_.named(kKind, k, size, addr, failure_)) return false;
    }
    addresses_.seen(kKind, addr, size);
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
    const ThreadRecord r{col(Column::kRest).varint(failed_)};
    if (!ok()) return false;
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
    if (!ok() || !address<AddressKind::kAlloc>(r.addr, r.size)) return false;
    if (!stack(r.stack) || !ok()) return false;
    visitor_.on_alloc(r);
    return true;
  }

  bool free() {
    FreeRecord r;
    if (!tid(r.tid)) return false;
    r.time_ns = time();
    if (!ok() || !address<AddressKind::kFree>(r.addr)) return false;
    visitor_.on_free(r);
    return true;
  }

  bool realloc() {
    ReallocRecord r;
    if (!tid(r.tid)) return false;
    const std::uint8_t fn = col(Column::kRest).u8(failed_);
    if (!ok()) return false;
    if (fn >= format::kAllocFnCount) return fail("a realloc names an unknown function");
    r.fn = static_cast<format::AllocFn>(fn);
    r.free_ns = time();
    if (!ok() || !address<AddressKind::kFree>(r.old_addr)) return false;
    r.alloc_ns = time_after(r.free_ns);
    r.size = size();
    if (!ok() || !address<AddressKind::kAlloc>(r.new_addr, r.size)) return false;
    if (!stack(r.stack) || !ok()) return false;
    visitor_.on_realloc(r);
    return true;
  }

  bool mmap() {
    MmapRecord r;
    if (!tid(r.tid)) return false;
    r.time_ns = time();
    if (!ok() || !address<AddressKind::kPlain>(r.addr)) return false;
    r.size = size();
    r.prot = col(Column::kRest).varint(failed_);
    r.flags = col(Column::kRest).varint(failed_);
    if (!stack(r.stack) || !ok()) return false;
    visitor_.on_mmap(r);
    return true;
  }

  bool munmap() {
    MunmapRecord r;
    if (!tid(r.tid)) return false;
    r.time_ns = time();
    if (!ok() || !address<AddressKind::kPlain>(r.addr)) return false;
    r.size = size();
    if (!ok()) return false;
    visitor_.on_munmap(r);
    return true;
  }

  bool mremap() {
    MremapRecord r;
    if (!tid(r.tid)) return false;
    r.free_ns = time();
    if (!ok() || !address<AddressKind::kPlain>(r.old_addr)) return false;
    r.old_size = size();
    r.alloc_ns = time_after(r.free_ns);
    if (!ok() || !address<AddressKind::kPlain>(r.new_addr)) return false;
    r.new_size = size();
    if (!stack(r.stack) || !ok()) return false;
    visitor_.on_mremap(r);
    return true;
  }

  // Any other record is its length and its body in `rest`.
  bool whole_in_rest(std::uint8_t tag) {
    detail::ColumnCursor& rest = col(Column::kRest);
    const std::uint64_t n = rest.varint(failed_);
    if (!ok()) return false;
    const std::span<const std::byte> bytes = rest.take(n, failed_);
    if (!ok()) return false;
    ByteReader body(bytes);
    if (!detail::decode_record_body(body, tag, state_, visitor_))
      return fail(fmt::format("unknown record tag {:#04x}", tag));
    if (!body.ok()) return fail(fmt::format("{} (record {:#04x})", body.failure(), tag));
    if (!body.at_end()) return fail(fmt::format("its length in rest is more than its body (record {:#04x})", tag));
    return true;
  }

  std::array<detail::ColumnCursor, format::kColumnCount> cols_;
  bool failed_ = false;  // a read ran off its column or past 64 bits (column_cursor.h)
  RecordVisitor& visitor_;
  detail::DecodeState state_;
  detail::AddressDecoder& addresses_;
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
  const std::string failure = layout == format::kLayoutSplitColumns
                                  ? ColumnDecoder<true>(*columns, layout, visitor).run()
                                  : ColumnDecoder<false>(*columns, layout, visitor).run();
  if (!failure.empty()) return corrupt(failure);
  return {};
}

}  // namespace memrec::reader
