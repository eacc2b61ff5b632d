// HeapTimeline: the bounded, widening series behind memrec view's overview.
#include "model/heap_timeline.h"

#include <doctest/doctest.h>

using memrec::analyzer::HeapTimeline;

TEST_SUITE("analyzer/heap_timeline") {
  TEST_CASE("keeps the last and the highest heap of each bucket") {
    HeapTimeline t(1000, 100);
    t.add(1010, 50, 1);
    t.add(1020, 80, 2);
    t.add(1030, 30, 1);
    t.add(1150, 60, 2);
    const auto b = t.buckets();
    REQUIRE(b.size() == 2);
    CHECK(b[0].heap_bytes == 30);
    CHECK(b[0].heap_max_bytes == 80);
    CHECK(b[0].live_count == 1);
    CHECK(b[1].heap_bytes == 60);
  }

  TEST_CASE("a bucket without events carries the heap of the one before") {
    HeapTimeline t(0, 10);
    t.add(5, 100, 3);
    t.add(35, 40, 1);
    const auto b = t.buckets();
    REQUIRE(b.size() == 4);
    CHECK(b[1].heap_bytes == 100);
    CHECK(b[2].heap_max_bytes == 100);
    CHECK(b[2].live_count == 3);
    CHECK(b[3].heap_bytes == 40);
  }

  TEST_CASE("widens its buckets instead of growing past twice kMaxBuckets") {
    HeapTimeline t(0, 1);
    const std::uint64_t n = 100000;
    for (std::uint64_t i = 0; i < n; ++i) t.add(i, i, i);
    const auto b = t.buckets();
    CHECK(b.size() <= 2 * HeapTimeline::kMaxBuckets);
    CHECK(b.size() >= HeapTimeline::kMaxBuckets);
    CHECK(t.bucket_ns() * b.size() >= n);
    CHECK(b.back().heap_bytes == n - 1);  // the latest value survives the merges
    CHECK(b.back().heap_max_bytes == n - 1);
    CHECK(b.front().heap_bytes < t.bucket_ns());
  }

  TEST_CASE("RSS samples land in the bucket of their time, the highest kept") {
    HeapTimeline t(1000, 100);
    t.add(1000, 10, 1);
    t.add(1250, 10, 1);
    t.add_rss(1010, 4096);
    t.add_rss(1020, 8192);
    const auto b = t.buckets();
    CHECK(b[0].rss_bytes == 8192);
    CHECK_FALSE(b[1].rss_bytes.has_value());
  }

  TEST_CASE("events before the start count in the first bucket") {
    HeapTimeline t(1000, 100);
    t.add(10, 7, 1);
    REQUIRE(t.buckets().size() == 1);
    CHECK(t.buckets()[0].heap_bytes == 7);
  }
}
