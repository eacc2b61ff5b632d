// Frames that one of several writers never finished (FORMAT.md, "Frames"):
// from version 8 on they are skipped and the complete frames after them are
// read; before it they keep meaning what they did (corruption in the middle,
// truncation at the end).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "memrec/format/file_header.h"
#include "memrec/reader/dump_reader.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::reader;
using format::AllocFn;
using memrec::testing::DumpBuilder;

namespace {

// Three frames, 2 + 2 + 3 records, each from its own writer thread; the last
// one ends with End.
DumpBuilder three_writers_dump() {
  DumpBuilder b;
  b.frame([](format::RecordEncoder& e) {
    e.thread(100);
    e.alloc(AllocFn::kMalloc, 1'000'200, 0x1000, 64, 0);
  });
  b.frame([](format::RecordEncoder& e) {
    e.thread(101);
    e.alloc(AllocFn::kMalloc, 1'000'300, 0x2000, 4096, 0);
  });
  b.frame([](format::RecordEncoder& e) {
    e.thread(102);
    e.free(1'000'400, 0x1000);
    e.end(1'000'600);
  });
  return b;
}

Result<DumpContents> read_bytes(std::vector<std::byte> bytes) {
  auto dump = open_dump(MappedFile::from_bytes(std::move(bytes), "pool.dat"));
  if (!dump) return dump.error();
  return read_all(*dump);
}

// Zeros the bytes of frame `i` from `from` (a file offset) to its end.
std::vector<std::byte> cut_frame(const DumpBuilder& b, std::size_t i, std::size_t from) {
  auto bytes = b.bytes();
  std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from),
            bytes.begin() + static_cast<std::ptrdiff_t>(b.frame_ends()[i]), std::byte{0});
  return bytes;
}

// Whether zeros from `from` to the frame's end at `end` can be bytes never
// written: 8 or more, or from a 512-byte boundary (frame_index.cpp).
bool looks_unwritten(std::size_t from, std::size_t end) { return end - from >= 8 || (from % 512 == 0 && from < end); }

}  // namespace

TEST_SUITE("reader/cut_frames") {
  TEST_CASE("the recorder writes a version whose readers skip frames a writer left unfinished") {
    CHECK(format::kFormatVersion >= kSeveralWritersVersion);
  }

  TEST_CASE("a middle frame cut anywhere it can be told from data is skipped, the frames after it read") {
    // given a dump of three frames where the second writer stopped at `from`,
    // its reserved space left as zeros up to the third frame
    const DumpBuilder b = three_writers_dump();
    const std::size_t offset = b.frame_offsets()[1];
    const std::size_t end = b.frame_ends()[1];
    std::size_t tried = 0;
    for (std::size_t from = offset; from < end; ++from) {
      if (!looks_unwritten(from, end)) continue;
      CAPTURE(from);
      ++tried;
      // when it is read
      const auto all = read_bytes(cut_frame(b, 1, from));
      // then the first and the last frame are read and the second is listed as cut
      REQUIRE(all.ok());
      CHECK(all->facts.frames == 2);
      CHECK(all->records.size() == 5);
      CHECK(all->facts.clean_end);
      CHECK_FALSE(all->facts.truncated_at.has_value());
      REQUIRE(all->facts.cut.size() == 1);
      CHECK(all->facts.cut[0].offset == offset);
      CHECK(all->facts.cut[0].bytes == end - offset);
      REQUIRE(all->frames.size() == 2);
      CHECK(all->frames[1].offset == b.frame_offsets()[2]);
    }
    CHECK(tried >= end - offset - 7);
  }

  TEST_CASE("a cut frame with no complete frame after it ends the dump there") {
    // given the second frame left unwritten and the third cut inside its data
    const DumpBuilder b = three_writers_dump();
    auto bytes = cut_frame(b, 1, b.frame_offsets()[1]);
    std::fill(bytes.end() - 12, bytes.end(), std::byte{0});
    // when it is read
    const auto all = read_bytes(bytes);
    // then only the first frame is read and the dump is truncated at the second
    REQUIRE(all.ok());
    CHECK(all->facts.frames == 1);
    CHECK(all->records.size() == 2);
    CHECK_FALSE(all->facts.clean_end);
    CHECK(all->facts.cut.empty());
    REQUIRE(all->facts.truncated_at.has_value());
    CHECK(*all->facts.truncated_at == b.frame_offsets()[1]);
  }

  TEST_CASE("two cut frames side by side between complete ones are skipped as one stretch") {
    DumpBuilder b = three_writers_dump();
    b.frame([](format::RecordEncoder& e) {
      e.thread(103);
      e.alloc(AllocFn::kMalloc, 1'000'700, 0x3000, 8, 0);
    });
    auto bytes = cut_frame(b, 1, b.frame_offsets()[1] + 3);
    std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(b.frame_ends()[2]) - 9,
              bytes.begin() + static_cast<std::ptrdiff_t>(b.frame_ends()[2]), std::byte{0});
    const auto all = read_bytes(bytes);
    REQUIRE(all.ok());
    CHECK(all->facts.frames == 2);
    CHECK(all->records.size() == 4);
    CHECK_FALSE(all->facts.truncated_at.has_value());
    REQUIRE(all->facts.cut.size() == 1);
    CHECK(all->facts.cut[0].offset == b.frame_offsets()[1]);
    CHECK(all->facts.cut[0].bytes == b.frame_ends()[2] - b.frame_offsets()[1]);
    REQUIRE(all->frames.size() == 2);
    CHECK(all->frames[1].offset == b.frame_offsets()[3]);
  }

  TEST_CASE("a damaged middle frame without a zero run is still corrupt") {
    const DumpBuilder b = three_writers_dump();
    auto bytes = b.bytes();
    const std::size_t middle = b.frame_offsets()[1];
    bytes[(middle + 12 + b.frame_ends()[1]) / 2] ^= std::byte{0xff};
    bytes[b.frame_ends()[1] - 1] = std::byte{0x5a};
    const auto all = read_bytes(bytes);
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().code == ErrorCode::kCorrupt);
    CHECK(all.error().message.find("pool.dat: corrupt frame at offset " + std::to_string(middle)) == 0);
  }

  TEST_CASE("in a version 7 file, zeros between complete frames stay corrupt") {
    // given the same cut dumps with the header's version set to 7
    const DumpBuilder b = three_writers_dump();
    const std::size_t offset = b.frame_offsets()[1];
    for (const std::size_t from : {offset, offset + 2, offset + 20}) {
      CAPTURE(from);
      auto bytes = cut_frame(b, 1, from);
      bytes[8] = std::byte{7};
      const auto all = read_bytes(bytes);
      // then the reader reports them corrupt, as version 7's readers did
      REQUIRE_FALSE(all.ok());
      CHECK(all.error().code == ErrorCode::kCorrupt);
      CHECK(all.error().message.find("pool.dat: corrupt frame at offset " + std::to_string(offset)) == 0);
    }
  }
}
