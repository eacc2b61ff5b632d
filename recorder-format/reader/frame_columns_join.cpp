// Joins a columns payload back into the version-1 records the writer split
// (memrec/format/frame_columns.h): the same walk, reading fields from their
// columns and each address through the same rings or ages. Input is
// untrusted: every column read is bounds-checked, an address code must name
// an address the frame has, every column must be used up exactly, and the
// rebuilt records may not pass kMaxFrameBytes (a one-byte code can stand for a
// ten-byte delta).
#include "memrec/reader/frame_columns_join.h"

#include <fmt/format.h>

#include "address_decoder.h"
#include "column_directory.h"
#include "memrec/format/frame_columns.h"

namespace memrec::reader {
namespace {

using format::AddressKind;
using format::Column;

class ColumnReader {
 public:
  void reset(std::span<const std::byte> bytes) {
    in_ = bytes;
    pos_ = 0;
  }
  bool used_up() const { return pos_ == in_.size(); }
  std::optional<std::uint64_t> varint() {
    const auto v = format::get_varint(in_.subspan(pos_));
    if (!v) return std::nullopt;
    pos_ += v->size;
    return v->value;
  }
  // The next varint's bytes, unchanged; empty when there is none.
  std::span<const std::byte> varint_bytes() {
    const std::size_t start = pos_;
    if (!varint()) return {};
    return in_.subspan(start, pos_ - start);
  }
  std::optional<std::span<const std::byte>> take(std::uint64_t n) {
    if (n > in_.size() - pos_) return std::nullopt;
    const auto out = in_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
};

class Joiner {
 public:
  Joiner(std::uint8_t layout, std::vector<std::byte>& out)
      : out_(out),
        addresses_(detail::address_decoder_for(layout)),
        layout_(layout),
        split_(layout == format::kLayoutSplitColumns) {}

  // The column directory; false when it does not describe `payload` exactly.
  bool open(std::span<const std::byte> payload) {
    const auto columns = detail::split_directory(payload, layout_);
    if (!columns) return false;
    for (std::size_t i = 0; i < format::kColumnCount; ++i) cols_[i].reset((*columns)[i]);
    return true;
  }

  // Rebuilds every record; an error message, or empty on success.
  std::string run() {
    ColumnReader& tags = col(Column::kTags);
    while (!tags.used_up()) {
      const std::uint8_t tag = static_cast<std::uint8_t>(tags.take(1).value()[0]);
      out_.push_back(std::byte{tag});
      if (!record(tag)) return failure_.empty() ? fmt::format("record {:#04x} runs past its columns", tag) : failure_;
      if (out_.size() > format::kMaxFrameBytes) return "its records rebuild to more than 64 MiB";
    }
    for (std::size_t i = 0; i < format::kColumnCount; ++i) {
      if (!cols_[i].used_up()) return fmt::format("column {} has bytes no record uses", i);
    }
    return {};
  }

 private:
  ColumnReader& col(Column c) { return cols_[static_cast<std::size_t>(c)]; }

  bool copy(Column c) {
    if (split_ && format::hi_column(c) != c) {
      const auto v = field(c);
      if (!v) return false;
      put_varint(*v);
      return true;
    }
    const auto bytes = col(c).varint_bytes();
    if (bytes.empty()) return false;
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    return true;
  }
  // A varint of column `c`: split in layout 4 where the column is
  // (frame_columns.h), whole otherwise.
  std::optional<std::uint64_t> field(Column c) {
    const Column hi = split_ ? format::hi_column(c) : c;
    if (hi == c) return col(c).varint();
    const auto first = col(c).take(1);
    if (!first) return std::nullopt;
    const auto b = static_cast<std::uint8_t>((*first)[0]);
    if ((b & 0x80) == 0) return b;
    const auto high = col(hi).varint();
    if (!high) return std::nullopt;
    return format::join_split_varint(b, *high);
  }
  void put_varint(std::uint64_t v) {
    std::byte buf[format::kMaxVarintBytes];
    const std::size_t n = format::put_varint(v, buf);
    out_.insert(out_.end(), buf, buf + n);
  }
  // `size`: an allocation's, which picks its size class.
  bool address(AddressKind kind, std::uint64_t size = 0) {
    // Layout 4 keeps the codes of allocations apart from the others.
    const auto k = field(split_ && kind == AddressKind::kAlloc ? Column::kAllocK : Column::kAddrK);
    if (!k) return false;
    std::uint64_t addr = 0;
    if (*k == format::kAddrMissAligned || *k == format::kAddrMissUnaligned) {
      const auto v = field(Column::kAddr);
      if (!v) return false;
      const auto d = static_cast<std::uint64_t>(format::unzigzag(*v));
      addr = addresses_.miss_base(kind) + (*k == format::kAddrMissAligned ? d << 4 : d);
      addresses_.missed(kind, addr, size);
    } else if (!addresses_.named(kind, *k, size, addr, failure_)) {
      return false;
    }
    addresses_.seen(kind, addr, size);
    put_varint(format::delta(v1_addr_, addr));
    v1_addr_ = addr;
    return true;
  }
  // An allocation's address and size, in version 1's order: the size is read
  // first, as it picks the address's class.
  bool alloc_address_and_size() {
    const auto size = field(Column::kSize);
    if (!size || !address(AddressKind::kAlloc, *size)) return false;
    put_varint(*size);
    return true;
  }

  bool record(std::uint8_t tag) {
    if ((tag & format::kAllocTagMask) == static_cast<std::uint8_t>(format::Tag::kAllocBase)) {
      return copy(Column::kDt) && alloc_address_and_size() && copy(Column::kStack);
    }
    switch (static_cast<format::Tag>(tag)) {
      case format::Tag::kThread:
        return copy(Column::kRest);
      case format::Tag::kFree:
        return copy(Column::kDt) && address(AddressKind::kFree);
      case format::Tag::kRealloc: {
        const auto fn = col(Column::kRest).take(1);
        if (!fn) return false;
        out_.push_back((*fn)[0]);
        return copy(Column::kDt) && address(AddressKind::kFree) && copy(Column::kDt) && alloc_address_and_size() &&
               copy(Column::kStack);
      }
      case format::Tag::kMmap:
        return copy(Column::kDt) && address(AddressKind::kPlain) && copy(Column::kSize) && copy(Column::kRest) &&
               copy(Column::kRest) && copy(Column::kStack);
      case format::Tag::kMunmap:
        return copy(Column::kDt) && address(AddressKind::kPlain) && copy(Column::kSize);
      case format::Tag::kMremap:
        return copy(Column::kDt) && address(AddressKind::kPlain) && copy(Column::kSize) && copy(Column::kDt) &&
               address(AddressKind::kPlain) && copy(Column::kSize) && copy(Column::kStack);
      default: {
        // Any other record, known or not, is whole in `rest`: the record
        // decoder judges its tag and body.
        const auto n = col(Column::kRest).varint();
        if (!n) return false;
        const auto body = col(Column::kRest).take(*n);
        if (!body) return false;
        out_.insert(out_.end(), body->begin(), body->end());
        return true;
      }
    }
  }

  std::vector<std::byte>& out_;
  std::array<ColumnReader, format::kColumnCount> cols_;
  detail::AddressDecoder& addresses_;
  std::uint8_t layout_;
  bool split_;  // layout 4: split varints
  std::uint64_t v1_addr_ = 0;
  std::string failure_;
};

}  // namespace

Status join_columns(std::span<const std::byte> payload, std::uint8_t layout, std::vector<std::byte>& out,
                    std::string_view name, std::uint64_t frame_offset) {
  out.clear();
  auto corrupt = [&](std::string_view why) {
    return Error{ErrorCode::kCorrupt, fmt::format("{}: corrupt frame at offset {}: {}", name, frame_offset, why)};
  };
  Joiner joiner(layout, out);
  if (!joiner.open(payload)) return corrupt("its column directory does not match its columns");
  const std::string failure = joiner.run();
  if (!failure.empty()) return corrupt(failure);
  return {};
}

}  // namespace memrec::reader
