// open_dump/read_all on whole files: truncation at every byte is data, while
// corrupt frames, foreign files and missing files are errors that name the file.
#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "memrec/format/frame_columns.h"
#include "memrec/reader/dump_reader.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::reader;
using format::AllocFn;
using memrec::testing::DumpBuilder;

namespace {

// Three frames, 4 + 3 + 4 records; the last one ends with End.
DumpBuilder small_complete_dump() {
  DumpBuilder b;
  b.frame([](format::RecordEncoder& e) {
    e.thread(100);
    e.thread_start(100, 1'000'100, "main");
    e.alloc(AllocFn::kMalloc, 1'000'200, 0x1000, 64, 0);
    e.free(1'000'300, 0x1000);
  });
  b.frame([](format::RecordEncoder& e) {
    e.thread(100);
    e.alloc(AllocFn::kCalloc, 1'000'400, 0x2000, 32, 0);
    const format::CounterValue c[] = {{format::Counter::kEvents, 3}};
    e.counters(c);
  });
  b.frame([](format::RecordEncoder& e) {
    e.thread(100);
    e.free(1'000'500, 0x2000);
    const format::CounterValue c[] = {{format::Counter::kEvents, 4}, {format::Counter::kFrames, 3}};
    e.counters(c);
    e.end(1'000'600);
  });
  return b;
}
constexpr std::size_t kRecordsPerFrame[] = {4, 3, 4};

Result<DumpContents> read_bytes(std::vector<std::byte> bytes, const std::string& name = "mem.dat") {
  auto dump = open_dump(MappedFile::from_bytes(std::move(bytes), name));
  if (!dump) return dump.error();
  return read_all(*dump);
}

// Runs `check` on what reading `bytes` from a real file gives, then removes it.
Result<DumpContents> read_file(const std::vector<std::byte>& bytes) {
  const std::string path = memrec::testing::write_temp_file(bytes, "reader.dat");
  auto result = read_all(path);
  std::filesystem::remove(path);
  return result;
}

}  // namespace

TEST_SUITE("reader/dump_reader") {
  TEST_CASE("reads a complete file with its frames, counters and clean end") {
    const DumpBuilder b = small_complete_dump();
    const auto all = read_file(b.bytes());
    REQUIRE(all.ok());
    CHECK(all->frames.size() == 3);
    CHECK(all->records.size() == 11);
    CHECK(all->facts.clean_end);
    CHECK_FALSE(all->facts.truncated_at.has_value());
    CHECK(all->facts.file_bytes == b.bytes().size());
    CHECK(all->facts.counters == std::map<std::uint64_t, std::uint64_t>{{1, 4}, {12, 3}});
    CHECK(all->header.pid == 4242);
    CHECK(all->frame_first_record == std::vector<std::size_t>{0, 4, 7});
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(all->frames[i].offset == b.frame_offsets()[i]);
      CHECK(all->frames[i].end_offset() == b.frame_ends()[i]);
    }
  }

  TEST_CASE("each writer's last counters replace only its own, and the dump's are their sum") {
    // given frames of the main writer and two pool writers, interleaved, each
    // writer's later Counters record counting on from its earlier one
    using format::Counter;
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) {
      const format::CounterValue c[] = {{Counter::kEvents, 10}, {Counter::kFrames, 1}, {Counter::kStacks, 5}};
      e.counters(c);
    });
    b.frame([](format::RecordEncoder& e) {
      const format::CounterValue c[] = {{Counter::kEvents, 100}, {Counter::kFrames, 1}, {Counter::kWriter, 1}};
      e.counters(c);
    });
    b.frame([](format::RecordEncoder& e) {
      const format::CounterValue c[] = {{Counter::kEvents, 200},
                                        {Counter::kFrames, 1},
                                        {Counter::kWriter, 2},
                                        {static_cast<Counter>(132), 7000},
                                        {static_cast<Counter>(133), 200}};
      e.counters(c);
    });
    b.frame([](format::RecordEncoder& e) {
      const format::CounterValue c[] = {{Counter::kEvents, 150}, {Counter::kFrames, 2}, {Counter::kWriter, 1}};
      e.counters(c);
    });
    b.frame([](format::RecordEncoder& e) {
      const format::CounterValue c[] = {{Counter::kEvents, 20}, {Counter::kFrames, 2}, {Counter::kStacks, 6}};
      e.counters(c);
      e.end(2'000'000);
    });
    // when it is read
    const auto all = read_file(b.bytes());
    REQUIRE(all.ok());
    // then events and frames add up over the writers' last records, the main
    // writer's own counts stay, writer 2's thread keys are kept, and the key
    // naming a writer is not a counter
    CHECK(all->facts.counters == std::map<std::uint64_t, std::uint64_t>{
                                     {1, 20 + 150 + 200}, {8, 6}, {12, 2 + 2 + 1}, {132, 7000}, {133, 200}});
    CHECK(all->facts.counters_by_writer.size() == 3);
    CHECK(all->facts.counters_by_writer.at(1).at(1) == 150);
  }

  TEST_CASE("a file cut at every byte offset reads the frames complete before the cut") {
    const DumpBuilder b = small_complete_dump();
    const auto& full = b.bytes();
    for (std::size_t cut = 0; cut < full.size(); ++cut) {
      CAPTURE(cut);
      const auto result = read_bytes({full.begin(), full.begin() + static_cast<std::ptrdiff_t>(cut)});
      if (cut == 0) {
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().code == ErrorCode::kEmpty);
        continue;
      }
      if (cut < b.header_bytes()) {
        REQUIRE_FALSE(result.ok());
        CHECK(result.error().code == ErrorCode::kTruncatedHeader);
        continue;
      }
      REQUIRE(result.ok());
      std::size_t complete = 0;
      std::size_t records = 0;
      while (complete < 3 && b.frame_ends()[complete] <= cut) records += kRecordsPerFrame[complete++];
      CHECK(result->frames.size() == complete);
      CHECK(result->facts.frames == complete);
      CHECK(result->records.size() == records);
      CHECK_FALSE(result->facts.clean_end);
      const bool at_boundary = cut == b.header_bytes() || (complete > 0 && b.frame_ends()[complete - 1] == cut);
      if (at_boundary) {
        CHECK_FALSE(result->facts.truncated_at.has_value());
      } else {
        REQUIRE(result->facts.truncated_at.has_value());
        CHECK(*result->facts.truncated_at == b.frame_offsets()[complete]);
      }
    }
  }

  TEST_CASE("a tail of zero bytes after the last frame counts as truncation") {
    // however few, and wherever they start: a frame would start with its tag
    const DumpBuilder b = small_complete_dump();
    for (std::size_t zeros : {std::size_t{3}, std::size_t{4096}}) {
      CAPTURE(zeros);
      auto bytes = b.bytes();
      bytes.resize(bytes.size() + zeros, std::byte{0});
      const auto all = read_bytes(bytes);
      REQUIRE(all.ok());
      CHECK(all->frames.size() == 3);
      CHECK(all->facts.clean_end);
      REQUIRE(all->facts.truncated_at.has_value());
      CHECK(*all->facts.truncated_at == b.bytes().size());
    }
  }

  TEST_CASE("a last frame whose end was never written (zeros) counts as truncation") {
    const DumpBuilder b = small_complete_dump();
    for (std::size_t zeros : {std::size_t{8}, std::size_t{40}, b.frame_ends()[2] - b.frame_offsets()[2]}) {
      CAPTURE(zeros);
      auto bytes = b.bytes();
      std::fill(bytes.end() - static_cast<std::ptrdiff_t>(zeros), bytes.end(), std::byte{0});
      const auto all = read_bytes(bytes);
      REQUIRE(all.ok());
      CHECK(all->frames.size() == 2);
      CHECK_FALSE(all->facts.clean_end);
      REQUIRE(all->facts.truncated_at.has_value());
      CHECK(*all->facts.truncated_at == b.frame_offsets()[2]);
    }
  }

  TEST_CASE("a few zeros from a 512-byte boundary inside the last frame count as never written") {
    // given dumps whose header grows a byte at a time, until the last 512-byte
    // boundary falls 1 to 7 bytes before the end, inside the last frame's data
    bool tried = false;
    for (std::size_t pad = 0; pad < 512 && !tried; ++pad) {
      const std::string exe = "/usr/bin/demo" + std::string(pad, 'x');
      format::FileHeaderFields fields = memrec::testing::sample_header();
      fields.exe_path = exe;
      DumpBuilder b(fields);
      b.frame([](format::RecordEncoder& e) { e.thread(100); });
      b.frame([](format::RecordEncoder& e) {
        e.thread(100);
        e.alloc(AllocFn::kMalloc, 1'000'200, 0x1000, 64, 0);
        e.end(1'000'600);
      });
      auto bytes = b.bytes();
      const std::size_t boundary = (bytes.size() - 1) / 512 * 512;
      if (boundary < b.frame_offsets()[1] + 12 + 16 || bytes.size() - boundary >= 8) continue;
      tried = true;
      CAPTURE(pad);
      // when the bytes from that boundary on are zeros (a block power loss never wrote)
      std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(boundary), bytes.end(), std::byte{0});
      const auto all = read_bytes(bytes);
      // then the last frame is cut, not corrupt
      REQUIRE(all.ok());
      CHECK(all->frames.size() == 1);
      REQUIRE(all->facts.truncated_at.has_value());
      CHECK(*all->facts.truncated_at == b.frame_offsets()[1]);
    }
    CHECK(tried);
  }

  TEST_CASE("a damaged last frame that happens to end in a zero byte is corrupt, not cut") {
    // given a complete dump whose last frame has a byte flipped in its zstd
    // data and ends in one zero byte (a zstd checksum does, one time in 256),
    // not on a 512-byte boundary
    const DumpBuilder b = small_complete_dump();
    auto bytes = b.bytes();
    REQUIRE((bytes.size() - 1) % 512 != 0);
    const std::size_t last = b.frame_offsets()[2];
    bytes[last + 12 + (bytes.size() - last - 12) / 2] ^= std::byte{0xff};
    bytes.back() = std::byte{0};
    // when it is read
    const auto all = read_bytes(bytes, "zero_end.dat");
    // then the frame is checked and reported corrupt, naming the file and offset
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().code == ErrorCode::kCorrupt);
    CHECK(all.error().message.find("zero_end.dat: corrupt frame at offset " + std::to_string(last)) == 0);
  }

  TEST_CASE("a wrong frame tag is corrupt, naming the file and the offset") {
    const DumpBuilder b = small_complete_dump();
    auto bytes = b.bytes();
    bytes[b.frame_offsets()[1]] = std::byte{'X'};
    const auto all = read_bytes(bytes, "tag.dat");
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().code == ErrorCode::kCorrupt);
    CHECK(all.error().message.find("tag.dat: corrupt frame at offset " + std::to_string(b.frame_offsets()[1])) == 0);
  }

  TEST_CASE("a frame size over the limit is corrupt even when the frame is cut") {
    const DumpBuilder b = small_complete_dump();
    auto bytes = b.bytes();
    bytes[b.frame_offsets()[2] + 7] = std::byte{0x7f};  // compressed size ~2 GiB
    const auto all = read_bytes(bytes, "size.dat");
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().code == ErrorCode::kCorrupt);
    CHECK(all.error().message.find(std::to_string(b.frame_offsets()[2])) != std::string::npos);
  }

  TEST_CASE("corrupt zstd bytes in a complete frame are corrupt, naming the offset") {
    const DumpBuilder b = small_complete_dump();
    const std::size_t frame = b.frame_offsets()[1];
    const std::size_t end = b.frame_ends()[1];
    for (std::size_t at = frame + format::kFrameEnvelopeBytes; at < end; ++at) {
      CAPTURE(at);
      auto bytes = b.bytes();
      bytes[at] ^= std::byte{0x5a};
      const auto all = read_bytes(bytes, "z.dat");
      REQUIRE_FALSE(all.ok());
      CHECK(all.error().code == ErrorCode::kCorrupt);
      CHECK(all.error().message.find("z.dat: corrupt frame at offset " + std::to_string(frame)) == 0);
    }
  }

  TEST_CASE("a decompressed size that differs from the envelope is corrupt") {
    const DumpBuilder b = small_complete_dump();
    auto bytes = b.bytes();
    bytes[b.frame_offsets()[0] + 8] ^= std::byte{0x01};  // decompressed size off by one
    const auto all = read_bytes(bytes);
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().code == ErrorCode::kCorrupt);
  }

  TEST_CASE("an unknown record tag in a complete frame is corrupt, naming the frame") {
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) { e.thread(1); });
    const std::byte payload[] = {std::byte{format::kLayoutRecords}, std::byte{0x01}, std::byte{0x01}, std::byte{0x7e}};
    const std::size_t offset = b.bytes().size();
    b.raw(memrec::testing::encode_frame(payload));
    const auto all = read_bytes(b.bytes(), "rec.dat");
    REQUIRE_FALSE(all.ok());
    CHECK(all.error().code == ErrorCode::kCorrupt);
    CHECK(all.error().message.find("rec.dat: corrupt frame at offset " + std::to_string(offset)) == 0);
    CHECK(all.error().message.find("unknown record tag") != std::string::npos);
  }

  TEST_CASE("a header with no frames is a valid, empty and unfinished dump") {
    const DumpBuilder b;
    const auto all = read_bytes(b.bytes());
    REQUIRE(all.ok());
    CHECK(all->frames.empty());
    CHECK_FALSE(all->facts.clean_end);
    CHECK_FALSE(all->facts.truncated_at.has_value());
  }

  TEST_CASE("foreign, newer, empty, directory and missing files give errors that name them") {
    const DumpBuilder b = small_complete_dump();
    auto not_dump = memrec::testing::to_bytes("#!/bin/sh\necho hello, this is not a dump\n");
    const auto foreign = read_file(not_dump);
    REQUIRE_FALSE(foreign.ok());
    CHECK(foreign.error().code == ErrorCode::kBadMagic);
    CHECK(foreign.error().message.find(": not a memrec dump (bad magic)") != std::string::npos);

    auto newer = b.bytes();
    newer[8] = std::byte{10};
    const auto version = read_file(newer);
    REQUIRE_FALSE(version.ok());
    CHECK(version.error().code == ErrorCode::kVersion);
    CHECK(version.error().message.find(": format v10 is newer than this memrec (v9)") != std::string::npos);

    const auto empty = read_file({});
    REQUIRE_FALSE(empty.ok());
    CHECK(empty.error().code == ErrorCode::kEmpty);

    const auto dir = std::filesystem::temp_directory_path() / ("memrec-unit-dir-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const auto directory = read_all(dir.string());
    std::filesystem::remove(dir);
    REQUIRE_FALSE(directory.ok());
    CHECK(directory.error().code == ErrorCode::kIo);
    CHECK(directory.error().message.find(dir.string() + ": is a directory") == 0);

    const auto missing = read_all("/nonexistent/memrec/missing.dat");
    REQUIRE_FALSE(missing.ok());
    CHECK(missing.error().code == ErrorCode::kNotFound);
    CHECK(missing.error().message.find("/nonexistent/memrec/missing.dat: no such file") == 0);
  }

  TEST_CASE("random mutations of a whole file never crash the reader") {
    const DumpBuilder b = small_complete_dump();
    std::mt19937_64 rng(7);
    for (int round = 0; round < 3000; ++round) {
      auto bytes = b.bytes();
      const int flips = 1 + static_cast<int>(rng() % 4);
      for (int i = 0; i < flips; ++i) bytes[rng() % bytes.size()] = std::byte{static_cast<std::uint8_t>(rng())};
      if (round % 3 == 0) bytes.resize(rng() % bytes.size() + 1);
      const auto all = read_bytes(bytes);
      if (!all.ok()) CHECK(!all.error().message.empty());
    }
  }
}
