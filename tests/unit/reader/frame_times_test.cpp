// The first pass's time scan against the full decoder: the same earliest
// time on every kind of record, every layout, and frames that do not decode.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "memrec/format/frame_columns.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/frame_times.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::reader;
using format::AllocFn;
using testing::DumpBuilder;
using testing::FrameLayout;

namespace {

// Every record kind, the times out of order across two threads, so that the
// earliest event is neither the first nor the last record.
void every_record(format::RecordEncoder& e) {
  const std::uint64_t ips[] = {0x401000, 0x402000};
  const format::Segment seg{0x1000, 0x2000, 0, format::kSegmentRead};
  const std::byte build_id[] = {std::byte{1}, std::byte{2}};
  const format::CounterValue counters[] = {{format::Counter::kEvents, 9}};
  e.thread(7);
  e.thread_start(7, 5'000, "worker");
  e.module_load(1, 1, "/bin/x", 0x10000, build_id, std::span(&seg, 1));
  e.stack(1, 1, 0, ips);
  e.alloc(AllocFn::kMalloc, 5'100, 0x1000, 16, 1);
  e.rss(5'150, 4096);
  e.realloc(AllocFn::kRealloc, 5'200, 0x1000, 5'250, 0x2000, 32, 1);
  e.thread(8);
  e.thread_name(8, "late");
  e.mmap(3'000, 0x7000'0000, 4096, 3, 0x22, 1);  // earliest: thread 8 drained late
  e.mremap(3'100, 0x7000'0000, 4096, 3'150, 0x7100'0000, 8192, 1);
  e.munmap(3'200, 0x7100'0000, 8192);
  e.thread(7);
  e.recording(5'300, false);
  e.free(5'400, 0x2000);
  e.counters(counters);
  e.module_unload(1, 2);
  e.thread_exit(7, 5'500);
  e.end(5'600);
}

std::vector<std::uint64_t> scan_all(const DumpBuilder& b) {
  auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "times.dat"));
  REQUIRE(static_cast<bool>(dump));
  FrameTimeScanner scanner;
  std::vector<std::uint64_t> out;
  for (const reader::FrameInfo& f : dump->index.frames) out.push_back(scanner.earliest(dump->bytes(), f, "times.dat"));
  return out;
}

}  // namespace

TEST_SUITE("reader/frame_times") {
  TEST_CASE("finds the earliest event of a frame whatever its layout") {
    for (const FrameLayout layout :
         {FrameLayout::kColumns, FrameLayout::kCarvedColumns, FrameLayout::kRecords, FrameLayout::kVersion1}) {
      CAPTURE(static_cast<int>(layout));
      DumpBuilder b(testing::sample_header(), layout);
      b.frame(every_record);
      b.frame([](format::RecordEncoder& e) {
        e.thread(7);
        e.free(9'000, 0x5000);
      });
      CHECK(scan_all(b) == std::vector<std::uint64_t>{3'000, 9'000});
    }
  }

  TEST_CASE("reads the times of a column payload without its addresses") {
    const std::vector<std::byte> records = [] {
      std::vector<std::byte> buf(1 << 16);
      format::RecordEncoder e(buf);
      every_record(e);
      return std::vector<std::byte>(e.written().begin(), e.written().end());
    }();
    for (const auto coding : {testing::ColumnCoding::kSplit, testing::ColumnCoding::kCarved}) {
      const std::vector<std::byte> payload = testing::columns_payload(records, coding);
      REQUIRE(payload.size() > 1);
      const auto layout = static_cast<std::uint8_t>(payload[0]);
      CHECK(earliest_in_columns(std::span(payload).subspan(1), layout) == std::optional<std::uint64_t>(3'000));
      // Read as the other layout, the directory's column count is wrong.
      const std::uint8_t other =
          layout == format::kLayoutSplitColumns ? format::kLayoutCarvedColumns : format::kLayoutSplitColumns;
      CHECK_FALSE(earliest_in_columns(std::span(payload).subspan(1), other).has_value());
    }
  }

  TEST_CASE("gives no time for a frame without events") {
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) {
      e.thread(7);
      e.thread_start(7, 100, "main");
      e.rss(200, 4096);
    });
    CHECK(scan_all(b) == std::vector<std::uint64_t>{kNoEventTime});
  }

  TEST_CASE("gives no time for a frame that does not decode, as the decoder says") {
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) {
      e.thread(7);
      e.free(100, 0x10);
    });
    std::vector<std::byte> bytes = b.bytes();
    bytes[b.frame_offsets()[0] + 20] ^= std::byte{0xff};  // inside the zstd frame: its checksum fails
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(bytes, "bad.dat"));
    REQUIRE(static_cast<bool>(dump));
    FrameTimeScanner scanner;
    CHECK(scanner.earliest(dump->bytes(), dump->index.frames[0], "bad.dat") == kNoEventTime);
  }

  TEST_CASE("refuses columns that run short, for the decoder to judge") {
    const std::byte no_directory[] = {std::byte{3}};
    CHECK_FALSE(earliest_in_columns(no_directory, format::kLayoutSplitColumns).has_value());
    // Seven columns, only the tag one non-empty: a Free whose dt is missing.
    const std::byte free_without_dt[] = {std::byte{7}, std::byte{1}, std::byte{0}, std::byte{0},   std::byte{0},
                                         std::byte{0}, std::byte{0}, std::byte{0}, std::byte{0x03}};
    CHECK_FALSE(earliest_in_columns(free_without_dt, format::kLayoutCarvedColumns).has_value());
    // Twelve columns (layout 4), likewise.
    const std::byte split_free_without_dt[] = {std::byte{12}, std::byte{1}, std::byte{0}, std::byte{0},   std::byte{0},
                                               std::byte{0},  std::byte{0}, std::byte{0}, std::byte{0},   std::byte{0},
                                               std::byte{0},  std::byte{0}, std::byte{0}, std::byte{0x03}};
    CHECK_FALSE(earliest_in_columns(split_free_without_dt, format::kLayoutSplitColumns).has_value());
  }
}
