// A bounds-checked cursor over bytes that may be hostile: every read checks
// the remaining length first. Once a read fails, `ok()` is false, later reads
// return zeros, and `failure()` says what went wrong first. Internal to the reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "memrec/format/varint.h"

namespace memrec::reader {

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::byte> in) : in_(in) {}

  bool ok() const { return failure_ == nullptr; }
  // The first failure, as a phrase for an error message; null while ok().
  const char* failure() const { return failure_; }
  std::size_t pos() const { return pos_; }
  std::size_t remaining() const { return in_.size() - pos_; }
  bool at_end() const { return pos_ == in_.size(); }
  void fail(const char* why) {
    if (failure_ == nullptr) failure_ = why;
  }

  std::uint8_t u8() {
    if (!ok() || remaining() < 1) {
      fail("a field runs off the end");
      return 0;
    }
    return static_cast<std::uint8_t>(in_[pos_++]);
  }
  std::uint16_t u16le() { return static_cast<std::uint16_t>(le(2)); }
  std::uint32_t u32le() { return static_cast<std::uint32_t>(le(4)); }
  std::uint64_t varint() {
    if (!ok()) return 0;
    // Most varints of a frame's columns are one byte.
    if (pos_ < in_.size() && static_cast<std::uint8_t>(in_[pos_]) < 0x80) {
      return static_cast<std::uint8_t>(in_[pos_++]);
    }
    const auto v = format::get_varint(in_.subspan(pos_));
    if (!v) {
      // get_varint fails either by running off the end or by an encoding over 64 bits.
      fail(remaining() < format::kMaxVarintBytes ? "a varint runs off the end" : "a varint is longer than 64 bits");
      return 0;
    }
    pos_ += v->size;
    return v->value;
  }
  std::int64_t zz() { return format::unzigzag(varint()); }
  // Applies a stored delta to `prev` (FORMAT.md, "Delta state").
  std::uint64_t delta_from(std::uint64_t prev) { return format::undelta(prev, varint()); }
  // A length-prefixed byte string of at most `max_bytes`.
  std::span<const std::byte> bytes(std::size_t max_bytes) {
    const std::uint64_t n = varint();
    if (!ok()) return {};
    if (n > max_bytes) {
      fail("a string is longer than the format allows");
      return {};
    }
    if (n > remaining()) {
      fail("a string runs off the end");
      return {};
    }
    return take(n);
  }
  // The next `n` bytes; empty, and failed, when fewer are left.
  std::span<const std::byte> take(std::uint64_t n) {
    if (!ok() || n > remaining()) {
      fail("a field runs off the end");
      return {};
    }
    const auto out = in_.subspan(pos_, static_cast<std::size_t>(n));
    pos_ += static_cast<std::size_t>(n);
    return out;
  }
  std::string_view string(std::size_t max_bytes) {
    const auto b = bytes(max_bytes);
    return {reinterpret_cast<const char*>(b.data()), b.size()};
  }

 private:
  std::uint64_t le(std::size_t n) {
    if (!ok() || remaining() < n) {
      fail("a fixed-width field runs off the end");
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(in_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  const char* failure_ = nullptr;
};

}  // namespace memrec::reader
