// decode_records on hostile payloads: every malformed record is a kCorrupt
// error naming the file and frame, and no input crashes the decoder.
#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "memrec/format/byte_writer.h"
#include "memrec/reader/frame_decoder.h"

using namespace memrec;
using namespace memrec::reader;

namespace {

struct Counter final : RecordVisitor {
  int records = 0;
  void on_thread(const ThreadRecord&) override { ++records; }
  void on_alloc(const AllocRecord&) override { ++records; }
  void on_free(const FreeRecord&) override { ++records; }
  void on_stack(const StackRecord&) override { ++records; }
  void on_counters(const CountersRecord&) override { ++records; }
};

// A payload written byte by byte with the format's own writer.
struct Payload {
  std::vector<std::byte> buf = std::vector<std::byte>(1 << 18);
  format::ByteWriter w{buf};
  std::vector<std::byte> bytes() const { return {w.written().begin(), w.written().end()}; }
};

Status decode(const std::vector<std::byte>& payload, Counter& counter) {
  return decode_records(payload, "hostile.dat", 4096, counter);
}

// A Stack record's fields before its frames (module generation 1).
void stack_head(Payload& p, std::uint64_t id, std::uint8_t flags, std::uint64_t depth) {
  p.w.u8(0x08);
  p.w.varint(id);
  p.w.varint(1);
  p.w.u8(flags);
  p.w.varint(depth);
}

void check_corrupt(const std::vector<std::byte>& payload, const std::string& why) {
  Counter counter;
  const Status s = decode(payload, counter);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == ErrorCode::kCorrupt);
  CHECK(s.error().message.find("hostile.dat: corrupt frame at offset 4096: " + why) == 0);
}

}  // namespace

TEST_SUITE("reader/record_decoder") {
  TEST_CASE("an empty payload decodes to no records") {
    Counter counter;
    CHECK(decode({}, counter).ok());
    CHECK(counter.records == 0);
  }

  TEST_CASE("unknown tags are corrupt, including alloc tags past the last function") {
    for (std::uint8_t tag : {0x00, 0x02, 0x14, 0x29, 0x2f, 0x30, 0xff}) {
      CAPTURE(tag);
      check_corrupt({std::byte{tag}}, "unknown record tag");
    }
  }

  TEST_CASE("an event before any Thread record is corrupt") {
    Payload p;
    p.w.u8(0x03);  // Free
    p.w.varint(2);
    p.w.varint(2);
    check_corrupt(p.bytes(), "an event comes before any Thread record");
  }

  TEST_CASE("a varint that runs off the end is corrupt, after the records before it") {
    Payload p;
    p.w.u8(0x01);
    p.w.varint(7);
    p.w.u8(0x03);
    p.w.u8(0x80);  // dt never ends
    Counter counter;
    const Status s = decode(p.bytes(), counter);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("a varint runs off the end") != std::string::npos);
    CHECK(s.error().message.find("record 1") != std::string::npos);
    CHECK(counter.records == 1);
  }

  TEST_CASE("a string longer than kMaxStringBytes is corrupt even when the bytes are there") {
    Payload p;
    p.w.u8(0x0c);  // ThreadName
    p.w.varint(1);
    p.w.varint(format::kMaxStringBytes + 1);
    for (std::uint32_t i = 0; i <= format::kMaxStringBytes && p.w.ok(); ++i) p.w.u8('a');
    REQUIRE(p.w.ok());
    check_corrupt(p.bytes(), "a string is longer than the format allows");
  }

  TEST_CASE("a string whose length runs past the frame is corrupt") {
    Payload p;
    p.w.u8(0x0c);
    p.w.varint(1);
    p.w.varint(100);
    p.w.u8('a');
    check_corrupt(p.bytes(), "a string runs off the end");
  }

  TEST_CASE("a stack deeper than kMaxStackDepth is corrupt") {
    Payload p;
    stack_head(p, 1, 0, format::kMaxStackDepth + 1);
    for (std::uint32_t i = 0; i <= format::kMaxStackDepth; ++i) p.w.varint(2);
    check_corrupt(p.bytes(), "a stack is deeper than the format's 1024 frames");
  }

  TEST_CASE("a stack at exactly kMaxStackDepth decodes") {
    Payload p;
    stack_head(p, 1, 0, format::kMaxStackDepth);
    for (std::uint32_t i = 0; i < format::kMaxStackDepth; ++i) p.w.varint(2);
    Counter counter;
    CHECK(decode(p.bytes(), counter).ok());
    CHECK(counter.records == 1);
  }

  TEST_CASE("a stack that shares more outer frames than the stack before it has is corrupt") {
    // The first stack of a frame has none before it; then one of 2 frames,
    // and one that claims 3 of them, and one that claims 0.
    for (const std::uint64_t claim : {1, 3, 0}) {
      CAPTURE(claim);
      Payload p;
      if (claim != 1) {
        stack_head(p, 1, 0, 2);
        p.w.varint(2);
        p.w.varint(2);
      }
      stack_head(p, 2, format::kStackShared, 4);
      p.w.varint(claim);
      for (std::uint64_t i = claim; i < 4; ++i) p.w.varint(2);
      check_corrupt(p.bytes(), "a stack shares more outer frames than the frame's stack before it has");
    }
  }

  TEST_CASE("huge counts are refused before anything is reserved") {
    Payload counters;
    counters.w.u8(0x10);
    counters.w.varint(~0ull);
    check_corrupt(counters.bytes(), "a counter count exceeds the frame");

    Payload module;
    module.w.u8(0x09);
    module.w.varint(1);
    module.w.varint(1);
    module.w.string("/lib/x.so");
    module.w.varint(0);
    module.w.bytes({});
    module.w.varint(1ull << 60);
    check_corrupt(module.bytes(), "a module's segment count exceeds the frame");
  }

  TEST_CASE("a stack id over 32 bits is corrupt") {
    Payload p;
    p.w.u8(0x01);
    p.w.varint(1);
    p.w.u8(0x20);
    p.w.varint(0);
    p.w.varint(0);
    p.w.varint(8);
    p.w.varint(format::zigzag(1ll << 33));
    Counter counter;
    const Status s = decode(p.bytes(), counter);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().message.find("a stack id is over 32 bits") != std::string::npos);
  }

  TEST_CASE("a realloc naming an unknown function and a recording flag of 2 are corrupt") {
    Payload realloc;
    realloc.w.u8(0x01);
    realloc.w.varint(1);
    realloc.w.u8(0x04);
    realloc.w.u8(9);
    for (int i = 0; i < 6; ++i) realloc.w.varint(0);
    check_corrupt(realloc.bytes(), "a realloc names an unknown function");

    Payload recording;
    recording.w.u8(0x0f);
    recording.w.varint(0);
    recording.w.u8(1 | 4 << 1);  // on, source 4: past the last
    check_corrupt(recording.bytes(), "a Recording record names an unknown source");
  }

  TEST_CASE("random payloads never crash the decoder") {
    std::mt19937_64 rng(12345);
    for (int round = 0; round < 20000; ++round) {
      std::vector<std::byte> payload(rng() % 64);
      for (auto& b : payload) b = std::byte{static_cast<std::uint8_t>(rng())};
      // Bias toward valid tags so decoding gets past the first byte.
      if (!payload.empty() && round % 2 == 0) payload[0] = std::byte{static_cast<std::uint8_t>(1 + rng() % 0x11)};
      Counter counter;
      const Status s = decode(payload, counter);
      if (!s.ok()) CHECK(s.error().code == ErrorCode::kCorrupt);
    }
  }
}
