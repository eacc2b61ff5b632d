// MmapRanges: munmap may cover part of a mapping, several, or none.
#include <doctest/doctest.h>

#include "model/mmap_ranges.h"

using namespace memrec::analyzer;

TEST_SUITE("analyzer/mmap_ranges") {
  TEST_CASE("unmapping the middle of a mapping leaves its two ends") {
    MmapRanges r;
    r.map(0x10000, 0x4000, StackId{1});
    CHECK(r.unmap(0x11000, 0x1000) == 0x1000);
    CHECK(r.live_bytes() == 0x3000);
    REQUIRE(r.live_count() == 2);
    CHECK(r.ranges().at(0x10000).end == 0x11000);
    CHECK(r.ranges().at(0x12000).end == 0x14000);
    CHECK(r.ranges().at(0x12000).stack == StackId{1});
  }

  TEST_CASE("one munmap can span several mappings and the gaps between them") {
    MmapRanges r;
    r.map(0x1000, 0x1000, StackId{1});
    r.map(0x3000, 0x1000, StackId{2});
    r.map(0x5000, 0x2000, StackId{3});
    CHECK(r.unmap(0x1800, 0x4000) == 0x800 + 0x1000 + 0x800);
    CHECK(r.live_bytes() == 0x800 + 0x1800);
    CHECK(r.live_count() == 2);
    CHECK(r.ranges().at(0x1000).end == 0x1800);
    CHECK(r.ranges().at(0x5800).end == 0x7000);
  }

  TEST_CASE("a munmap that overlaps nothing changes nothing") {
    MmapRanges r;
    r.map(0x1000, 0x1000, StackId{1});
    CHECK(r.unmap(0x2000, 0x1000) == 0);
    CHECK(r.unmap(0x0, 0x1000) == 0);
    CHECK(r.unmap(0x1000, 0) == 0);
    CHECK(r.live_bytes() == 0x1000);
  }

  TEST_CASE("a mapping over live pages replaces them, as MAP_FIXED does") {
    MmapRanges r;
    r.map(0x1000, 0x3000, StackId{1});
    r.map(0x2000, 0x3000, StackId{2});
    CHECK(r.live_bytes() == 0x4000);
    CHECK(r.live_count() == 2);
    CHECK(r.ranges().at(0x1000).end == 0x2000);
    CHECK(r.ranges().at(0x2000).stack == StackId{2});
  }

  TEST_CASE("a size reaching past the top of the address space saturates") {
    MmapRanges r;
    r.map(~0ull - 0xfff, ~0ull, StackId{1});
    CHECK(r.live_bytes() == 0xfff);
    CHECK(r.unmap(~0ull - 0xfff, ~0ull) == 0xfff);
    CHECK(r.live_bytes() == 0);
    CHECK(r.live_count() == 0);
  }
}
