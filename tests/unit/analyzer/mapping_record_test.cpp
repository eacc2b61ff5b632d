// MappingRecord: the live mappings, each stack's figures and the series,
// from mmap, munmap and mremap events in merged order.
#include "model/mapping_record.h"

#include <doctest/doctest.h>

#include <algorithm>

using namespace memrec::analyzer;

namespace {

HeapEvent mmap_at(std::uint64_t t, std::uint64_t addr, std::uint64_t size, std::uint32_t stack) {
  return HeapEvent{t, addr, size, StackId{stack}, HeapOp::kMmap};
}
HeapEvent munmap_at(std::uint64_t t, std::uint64_t addr, std::uint64_t size) {
  return HeapEvent{t, addr, size, StackId{}, HeapOp::kMunmap};
}
// An mremap's two halves, as load/frame_collector.cpp makes them.
void mremap_at(MappingRecord& r, std::uint64_t t, std::uint64_t from, std::uint64_t old_size, std::uint64_t to,
               std::uint64_t new_size, std::uint32_t stack) {
  r.add(HeapEvent{t, from, old_size, StackId{}, HeapOp::kMunmap, true});
  r.add(HeapEvent{t + 1, to, new_size, StackId{stack}, HeapOp::kMmap, true});
}

}  // namespace

TEST_SUITE("analyzer/mapping_record") {
  TEST_CASE("a partial munmap splits a mapping, and both pieces keep its stack and time") {
    MappingRecord r(1000);
    r.add(mmap_at(1100, 0x10000, 0x4000, 7));
    r.add(munmap_at(1200, 0x11000, 0x1000));
    REQUIRE(r.live().live_count() == 2);
    CHECK(r.live().ranges().at(0x12000).mapped_ns == 1100);
    CHECK(r.live().ranges().at(0x12000).stack == StackId{7});
    const MappingStackFigures& s = r.stacks().at(7);
    CHECK(s.mmaps == 1);
    CHECK(s.mapped_bytes == 0x4000);
    CHECK(s.unmapped_bytes == 0x1000);
    CHECK(s.live_bytes == 0x3000);
    CHECK(s.peak_bytes == 0x4000);
    CHECK(s.first_ns == 1100);
    CHECK(s.last_ns == 1200);
  }

  TEST_CASE("an mremap releases bytes of the old mapping's stack and maps them for its own") {
    MappingRecord r(0);
    r.add(mmap_at(10, 0x10000, 0x1000, 1));
    mremap_at(r, 20, 0x10000, 0x1000, 0x40000, 0x3000, 2);
    r.add(munmap_at(30, 0x40000, 0x3000));
    CHECK(r.totals().mmaps == 1);
    CHECK(r.totals().mremaps == 1);
    CHECK(r.totals().munmaps == 1);  // the mremap's release is not a munmap call
    CHECK(r.totals().missed_munmaps == 0);
    CHECK(r.totals().peak_bytes == 0x3000);
    CHECK(r.totals().peak_time_ns == 21);
    CHECK(r.stacks().at(1).unmapped_bytes == 0x1000);
    CHECK(r.stacks().at(1).live_bytes == 0);
    CHECK(r.stacks().at(2).mremaps == 1);
    CHECK(r.stacks().at(2).mmaps == 0);
    CHECK(r.stacks().at(2).mapped_bytes == 0x3000);
    CHECK(r.stacks().at(2).peak_bytes == 0x3000);
    CHECK(r.live().live_bytes() == 0);
  }

  TEST_CASE("a mapping over live ones takes their bytes from their stacks") {
    MappingRecord r(0);
    r.add(mmap_at(1, 0x10000, 0x2000, 1));
    r.add(mmap_at(2, 0x11000, 0x2000, 2));  // MAP_FIXED over the second page of the first
    CHECK(r.stacks().at(1).live_bytes == 0x1000);
    CHECK(r.stacks().at(1).unmapped_bytes == 0x1000);
    CHECK(r.stacks().at(2).live_bytes == 0x2000);
    CHECK(r.live().live_bytes() == 0x3000);
    CHECK(r.totals().peak_bytes == 0x3000);
  }

  TEST_CASE("a munmap of no known mapping is counted and changes nothing") {
    MappingRecord r(0);
    r.add(mmap_at(1, 0x10000, 0x1000, 1));
    r.add(munmap_at(2, 0x90000, 0x1000));
    CHECK(r.totals().munmaps == 1);
    CHECK(r.totals().missed_munmaps == 1);
    CHECK(r.live().live_bytes() == 0x1000);
    const auto buckets = r.series().buckets();
    const std::uint64_t releases =
        std::count_if(buckets.begin(), buckets.end(), [](const TimelineBucket& b) { return b.free_count != 0; });
    CHECK(releases == 0);
  }

  TEST_CASE("a hostile stack id is kept under stack 0") {
    MappingRecord r(0);
    r.add(mmap_at(1, 0x10000, 0x1000, 0xffffffffu));
    REQUIRE(r.stacks().size() == 1);
    CHECK(r.stacks().count(0) == 1);
    CHECK(r.stack_columns().size() == 1);
  }

  TEST_CASE("a million mappings keep a bounded series with the exact peak and end") {
    MappingRecord r(0);
    constexpr std::uint64_t kN = 1'000'000;
    for (std::uint64_t i = 0; i < kN; ++i) {
      r.add(mmap_at(10 * i + 1, 0x100000 + (i % 4) * 0x10000, 0x1000 * (1 + i % 4), 1));
      if (i % 4 == 3 && i + 1 < kN) {
        for (std::uint64_t k = 0; k < 4; ++k) r.add(munmap_at(10 * i + 2, 0x100000 + k * 0x10000, 0x10000));
      }
    }
    r.extend_to(10 * kN);
    const auto buckets = r.series().buckets();
    CHECK(buckets.size() <= 2 * HeapTimeline::kMaxBuckets);
    std::uint64_t highest = 0, maps = 0, releases = 0;
    for (const TimelineBucket& b : buckets) {
      highest = std::max(highest, b.heap_max_bytes);
      maps += b.alloc_count;
      releases += b.free_count;
    }
    CHECK(highest == 0xa000);                    // 1 + 2 + 3 + 4 pages at once
    CHECK(buckets.back().heap_bytes == 0xa000);  // the last four are left
    CHECK(buckets.back().live_count == 4);
    CHECK(maps == kN);
    CHECK(releases == kN - 4);
    CHECK(r.live().live_count() == 4);
    CHECK(r.stacks().at(1).peak_bytes == 0xa000);
  }

  TEST_CASE("the stack columns carry each stack's mappings for the symbolizer") {
    MappingRecord r(0);
    r.add(mmap_at(1, 0x10000, 0x1000, 3));
    r.add(munmap_at(2, 0x10000, 0x1000));
    r.add(mmap_at(3, 0x20000, 0x2000, 5));
    const StackColumns c = r.stack_columns();
    REQUIRE(c.size() == 6);
    CHECK(c.allocations[3] == 1);
    CHECK(c.allocated_bytes[3] == 0x1000);
    CHECK(c.leaked_bytes[3] == 0);
    CHECK(c.peak_bytes[3] == 0x1000);
    CHECK(c.leaked_bytes[5] == 0x2000);
    CHECK(c.allocations[4] == 0);
  }
}
