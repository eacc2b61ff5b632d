// ByteWriter: the bounds-checked cursor the encoders write through.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "memrec/format/byte_writer.h"

using namespace memrec::format;

TEST_SUITE("format/byte_writer") {
  TEST_CASE("writes fixed-width integers little-endian") {
    std::array<std::byte, 7> buf{};
    ByteWriter w(buf);
    w.u8(0xab);
    w.u16le(0x1234);
    w.u32le(0xdeadbeef);
    REQUIRE(w.ok());
    CHECK(w.size() == 7);
    const std::array<std::uint8_t, 7> want{0xab, 0x34, 0x12, 0xef, 0xbe, 0xad, 0xde};
    for (std::size_t i = 0; i < want.size(); ++i) CHECK(static_cast<std::uint8_t>(buf[i]) == want[i]);
  }

  TEST_CASE("writes a string as a varint length and its bytes") {
    std::array<std::byte, 8> buf{};
    ByteWriter w(buf);
    w.string("abc");
    w.string("");
    REQUIRE(w.ok());
    CHECK(w.size() == 5);
    CHECK(static_cast<char>(buf[0]) == 3);
    CHECK(static_cast<char>(buf[1]) == 'a');
    CHECK(static_cast<char>(buf[3]) == 'c');
    CHECK(static_cast<char>(buf[4]) == 0);
  }

  TEST_CASE("fails without overrunning and ignores later writes") {
    std::array<std::byte, 4> buf{};
    buf.fill(std::byte{0x55});
    ByteWriter w(std::span<std::byte>(buf).first(3));
    w.u16le(1);
    w.u16le(2);  // needs 2, only 1 left
    CHECK_FALSE(w.ok());
    w.u8(9);  // ignored once failed
    CHECK(w.size() == 2);
    CHECK(buf[3] == std::byte{0x55});
  }

  TEST_CASE("fails on a varint or raw bytes that do not fit") {
    std::array<std::byte, 2> buf{};
    ByteWriter w(buf);
    w.varint(1u << 20);  // 3 bytes
    CHECK_FALSE(w.ok());
    CHECK(w.size() == 0);

    ByteWriter r(buf);
    const std::array<std::byte, 3> three{};
    r.raw(three);
    CHECK_FALSE(r.ok());
  }

  TEST_CASE("rewind drops a partial record and clears the failure") {
    std::array<std::byte, 3> buf{};
    ByteWriter w(buf);
    w.u8(1);
    const std::size_t mark = w.size();
    w.u32le(7);
    CHECK_FALSE(w.ok());
    w.rewind(mark);
    CHECK(w.ok());
    w.u16le(0x0102);
    CHECK(w.ok());
    CHECK(w.written().size() == 3);
  }

  TEST_CASE("zz writes the zigzag code") {
    std::array<std::byte, 1> buf{};
    ByteWriter w(buf);
    w.zz(-1);
    REQUIRE(w.ok());
    CHECK(buf[0] == std::byte{1});
  }
}
