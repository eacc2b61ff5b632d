// A bounds-checked cursor over a caller's buffer. It never allocates: once a
// write would overrun, `ok()` turns false and later writes are ignored, so an
// encoder can write a whole record and check once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "memrec/format/varint.h"

namespace memrec::format {

class ByteWriter {
 public:
  explicit constexpr ByteWriter(std::span<std::byte> out) : out_(out) {}

  constexpr bool ok() const { return ok_; }
  constexpr std::size_t size() const { return pos_; }
  constexpr std::span<std::byte> written() const { return out_.first(pos_); }
  constexpr std::span<std::byte> rest() const { return out_.subspan(pos_); }
  // Moves the end back to `pos` (and clears a failure), dropping a partial record.
  constexpr void rewind(std::size_t pos) {
    pos_ = pos;
    ok_ = true;
  }

  constexpr void u8(std::uint8_t v) {
    if (!reserve(1)) return;
    out_[pos_++] = std::byte{v};
  }
  void u16le(std::uint16_t v) { le(v, 2); }
  void u32le(std::uint32_t v) { le(v, 4); }
  constexpr void varint(std::uint64_t v) {
    if (!ok_) return;
    const std::size_t n = put_varint(v, out_.subspan(pos_));
    if (n == 0) {
      ok_ = false;
      return;
    }
    pos_ += n;
  }
  constexpr void zz(std::int64_t v) { varint(zigzag(v)); }

  // The unchecked fast path of the hottest records: once room() is at least a
  // record's largest size, write at cursor() and advance() past it.
  constexpr std::size_t room() const { return ok_ ? out_.size() - pos_ : 0; }
  std::byte* cursor() const { return out_.data() + pos_; }
  void advance(std::byte* end) { pos_ = static_cast<std::size_t>(end - out_.data()); }
  // A varint or byte where room() is known to hold it.
  void varint_unchecked(std::uint64_t v) { advance(put_varint_unchecked(v, cursor())); }
  void u8_unchecked(std::uint8_t v) { out_[pos_++] = std::byte{v}; }
  void raw(std::span<const std::byte> bytes) {
    if (!reserve(bytes.size())) return;
    if (!bytes.empty()) std::memcpy(out_.data() + pos_, bytes.data(), bytes.size());
    pos_ += bytes.size();
  }
  // A length-prefixed byte string (varint length, then the bytes).
  void bytes(std::span<const std::byte> b) {
    varint(b.size());
    raw(b);
  }
  void string(std::string_view s) { bytes(std::as_bytes(std::span(s.data(), s.size()))); }

 private:
  constexpr bool reserve(std::size_t n) {
    if (ok_ && out_.size() - pos_ >= n) return true;
    ok_ = false;
    return false;
  }
  void le(std::uint64_t v, int n) {
    if (!reserve(static_cast<std::size_t>(n))) return;
    for (int i = 0; i < n; ++i) out_[pos_++] = std::byte{static_cast<std::uint8_t>(v >> (8 * i))};
  }

  std::span<std::byte> out_;
  std::size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace memrec::format
