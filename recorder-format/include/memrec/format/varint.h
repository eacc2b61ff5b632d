// LEB128 varints and zigzag for the .dat format (FORMAT.md, "Integers").
// Header-only and allocation-free: the preload encodes with it on its writer
// thread, the reader decodes with it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace memrec::format {

inline constexpr std::size_t kMaxVarintBytes = 10;

// Writes `value` to the front of `out`. Returns the bytes used (1..10), or 0
// if `out` is too short.
constexpr std::size_t put_varint(std::uint64_t value, std::span<std::byte> out) {
  std::size_t n = 0;
  do {
    if (n == out.size()) return 0;
    const auto low7 = static_cast<std::uint8_t>(value & 0x7f);
    value >>= 7;
    out[n++] = std::byte{static_cast<std::uint8_t>(low7 | (value != 0 ? 0x80 : 0))};
  } while (value != 0);
  return n;
}

// Writes `value` at `out`, which has room for kMaxVarintBytes; returns the
// end. The same bytes as put_varint.
inline std::byte* put_varint_unchecked(std::uint64_t value, std::byte* out) {
  while (value >= 0x80) {
    *out++ = std::byte{static_cast<std::uint8_t>(value | 0x80)};
    value >>= 7;
  }
  *out++ = std::byte{static_cast<std::uint8_t>(value)};
  return out;
}

struct DecodedVarint {
  std::uint64_t value;
  std::size_t size;
};

// Reads one varint from the front of `in`. Empty if `in` ends inside it or
// the encoding is longer than 10 bytes or overflows 64 bits.
constexpr std::optional<DecodedVarint> get_varint(std::span<const std::byte> in) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < in.size() && i < kMaxVarintBytes; ++i) {
    const auto b = static_cast<std::uint8_t>(in[i]);
    if (i == kMaxVarintBytes - 1 && (b & 0x7e) != 0) return std::nullopt;  // > 64 bits
    value |= static_cast<std::uint64_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) return DecodedVarint{value, i + 1};
  }
  return std::nullopt;
}

// Signed deltas are zigzag-mapped so small magnitudes of either sign stay short.
constexpr std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
constexpr std::int64_t unzigzag(std::uint64_t v) {
  return static_cast<std::int64_t>(v >> 1) ^ -static_cast<std::int64_t>(v & 1);
}

// The delta from `prev` to `next` as the format stores it: the wrapping
// difference read as signed, so any two 64-bit values round-trip.
constexpr std::uint64_t delta(std::uint64_t prev, std::uint64_t next) {
  return zigzag(static_cast<std::int64_t>(next - prev));
}
constexpr std::uint64_t undelta(std::uint64_t prev, std::uint64_t encoded) {
  return prev + static_cast<std::uint64_t>(unzigzag(encoded));
}

}  // namespace memrec::format
