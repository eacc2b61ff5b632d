// A read position in one column of a columns payload, for the column
// decoder's per-event loop (column_decoder.cpp): two pointers, and no
// failure state of its own. A read that runs off the end or past 64 bits
// returns 0 and raises the decoder's one `failed` flag, which the decoder
// checks where ByteReader's per-column states were checked: a read costs a
// compare and a load, where ByteReader's also loaded and tested its failure
// and recomputed its position (a third of the decoding's instructions).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "memrec/format/varint.h"

namespace memrec::reader::detail {

class ColumnCursor {
 public:
  ColumnCursor() = default;
  explicit ColumnCursor(std::span<const std::byte> bytes)
      : at_(reinterpret_cast<const std::uint8_t*>(bytes.data())), end_(at_ + bytes.size()) {}

  bool at_end() const { return at_ == end_; }
  std::size_t remaining() const { return static_cast<std::size_t>(end_ - at_); }

  [[gnu::always_inline]] std::uint8_t u8(bool& failed) {
    if (at_ == end_) [[unlikely]] {
      failed = true;
      return 0;
    }
    return *at_++;
  }
  // Most varints of a frame's columns are one byte.
  [[gnu::always_inline]] std::uint64_t varint(bool& failed) {
    if (at_ != end_ && *at_ < 0x80) [[likely]]
      return *at_++;
    return long_varint(failed);
  }
  // The next `n` bytes; empty, and failed, when fewer are left.
  std::span<const std::byte> take(std::uint64_t n, bool& failed) {
    if (n > remaining()) {
      failed = true;
      return {};
    }
    const std::span<const std::byte> out(reinterpret_cast<const std::byte*>(at_), static_cast<std::size_t>(n));
    at_ += n;
    return out;
  }

 private:
  [[gnu::noinline]] std::uint64_t long_varint(bool& failed) {
    const auto v = format::get_varint({reinterpret_cast<const std::byte*>(at_), remaining()});
    if (!v) {
      failed = true;
      return 0;
    }
    at_ += v->size;
    return v->value;
  }

  const std::uint8_t* at_ = nullptr;
  const std::uint8_t* end_ = nullptr;
};

}  // namespace memrec::reader::detail
