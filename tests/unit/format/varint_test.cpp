// LEB128 and zigzag edge cases (FORMAT.md, "Integers").
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <limits>

#include "memrec/format/varint.h"

using namespace memrec::format;

TEST_SUITE("format/varint") {
  TEST_CASE("round-trips the edges of every encoded length") {
    for (int bits = 0; bits <= 64; ++bits) {
      const std::uint64_t top = bits == 64 ? ~0ull : (1ull << bits);
      for (std::uint64_t v : {top - 1, top, top + 1}) {
        CAPTURE(v);
        std::array<std::byte, kMaxVarintBytes> buf{};
        const std::size_t n = put_varint(v, buf);
        REQUIRE(n > 0);
        CHECK(n == (v == 0 ? 1 : (64 - static_cast<std::size_t>(__builtin_clzll(v)) + 6) / 7));
        const auto decoded = get_varint(std::span(buf).first(n));
        REQUIRE(decoded.has_value());
        CHECK(decoded->value == v);
        CHECK(decoded->size == n);
      }
    }
  }

  TEST_CASE("writes nothing useful and returns 0 when the buffer is too short") {
    std::array<std::byte, 2> buf{};
    CHECK(put_varint(16384, buf) == 0);
    CHECK(put_varint(16383, buf) == 2);
    CHECK(put_varint(0, std::span<std::byte>{}) == 0);
  }

  TEST_CASE("rejects a varint that runs off the end") {
    const std::array<std::byte, 2> cut{std::byte{0x80}, std::byte{0x80}};
    CHECK_FALSE(get_varint(cut).has_value());
    CHECK_FALSE(get_varint(std::span<const std::byte>{}).has_value());
  }

  TEST_CASE("rejects encodings longer than 64 bits") {
    std::array<std::byte, 11> eleven{};
    eleven.fill(std::byte{0x80});
    eleven[10] = std::byte{0x00};
    CHECK_FALSE(get_varint(eleven).has_value());

    std::array<std::byte, 10> ten{};
    ten.fill(std::byte{0xff});
    ten[9] = std::byte{0x02};  // bit 64 set
    CHECK_FALSE(get_varint(ten).has_value());
    ten[9] = std::byte{0x01};  // bit 63: the largest value
    const auto max = get_varint(ten);
    REQUIRE(max.has_value());
    CHECK(max->value == ~0ull);
  }

  TEST_CASE("zigzag maps small magnitudes of either sign to small codes") {
    CHECK(zigzag(0) == 0);
    CHECK(zigzag(-1) == 1);
    CHECK(zigzag(1) == 2);
    CHECK(zigzag(-2) == 3);
    constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
    constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
    for (std::int64_t v : {kMin, kMin + 1, std::int64_t{-1}, std::int64_t{0}, kMax}) {
      CHECK(unzigzag(zigzag(v)) == v);
    }
    CHECK(zigzag(kMax) == ~0ull - 1);
    CHECK(zigzag(kMin) == ~0ull);
  }

  TEST_CASE("deltas between any two 64-bit values round-trip, wrapping") {
    const std::uint64_t values[] = {0, 1, 0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, 0x7f0012345678ull};
    for (std::uint64_t prev : values) {
      for (std::uint64_t next : values) {
        CAPTURE(prev);
        CAPTURE(next);
        CHECK(undelta(prev, delta(prev, next)) == next);
      }
    }
    CHECK(delta(100, 99) == 1);  // a step back is a small code
  }
}
