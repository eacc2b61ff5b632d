// HeapTimeline: the bounded, widening series behind memrec view's overview.
#include "model/heap_timeline.h"

#include <doctest/doctest.h>

using memrec::analyzer::HeapTimeline;
using memrec::analyzer::TimelineEvent;

namespace {
constexpr TimelineEvent kAlloc = TimelineEvent::kAllocation;
constexpr TimelineEvent kFree = TimelineEvent::kFree;
}  // namespace

TEST_SUITE("analyzer/heap_timeline") {
  TEST_CASE("keeps the last and the highest heap of each bucket") {
    HeapTimeline t(1000, 100);
    t.add(1010, kAlloc, 50, 1);
    t.add(1020, kAlloc, 80, 2);
    t.add(1030, kAlloc, 30, 1);
    t.add(1150, kAlloc, 60, 2);
    const auto b = t.buckets();
    REQUIRE(b.size() == 2);
    CHECK(b[0].heap_bytes == 30);
    CHECK(b[0].heap_max_bytes == 80);
    CHECK(b[0].live_count == 1);
    CHECK(b[1].heap_bytes == 60);
  }

  TEST_CASE("a bucket without events carries the heap of the one before") {
    HeapTimeline t(0, 10);
    t.add(5, kAlloc, 100, 3);
    t.add(35, kAlloc, 40, 1);
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
    for (std::uint64_t i = 0; i < n; ++i) t.add(i, kAlloc, i, i);
    const auto b = t.buckets();
    CHECK(b.size() <= 2 * HeapTimeline::kMaxBuckets);
    CHECK(b.size() >= HeapTimeline::kMaxBuckets);
    CHECK(t.bucket_ns() * b.size() >= n);
    CHECK(b.back().heap_bytes == n - 1);  // the latest value survives the merges
    CHECK(b.back().heap_max_bytes == n - 1);
    CHECK(b.front().heap_bytes < t.bucket_ns());
  }

  TEST_CASE("counts the frees of temporary allocations in their bucket, also through widening") {
    HeapTimeline t(0, 1);
    const std::uint64_t n = 100000;
    for (std::uint64_t i = 0; i < n; ++i) {
      t.add(2 * i, kAlloc, 16, 1);
      t.add(2 * i + 1, kFree, 0, 0, i % 4 == 0);  // every fourth block freed before the next allocation
    }
    t.add(2 * n, TimelineEvent::kUnmatchedFree, 0, 0, true);  // no block freed: not a temporary one either
    std::uint64_t temporary = 0;
    std::uint64_t frees = 0;
    for (const auto& b : t.buckets()) {
      CHECK(b.temporary_count <= b.free_count);
      temporary += b.temporary_count;
      frees += b.free_count;
    }
    CHECK(temporary == n / 4);
    CHECK(frees == n);
  }

  TEST_CASE("RSS samples land in the bucket of their time, the highest kept") {
    HeapTimeline t(1000, 100);
    t.add(1000, kAlloc, 10, 1);
    t.add(1250, kAlloc, 10, 1);
    t.add_rss(1010, 4096);
    t.add_rss(1020, 8192);
    const auto b = t.buckets();
    CHECK(b[0].rss_bytes == 8192);
    CHECK_FALSE(b[1].rss_bytes.has_value());
  }

  TEST_CASE("events before the start count in the first bucket") {
    HeapTimeline t(1000, 100);
    t.add(10, kAlloc, 7, 1);
    REQUIRE(t.buckets().size() == 1);
    CHECK(t.buckets()[0].heap_bytes == 7);
  }

  TEST_CASE("counts allocations and frees of live blocks, through every widening") {
    HeapTimeline t(0, 1);
    std::uint64_t heap = 0;
    for (std::uint64_t i = 0; i < 10000; ++i) {
      t.add(i, kAlloc, heap += 8, 1);
      if (i % 2 == 0) t.add(i, kFree, heap -= 8, 0);
      if (i % 5 == 0) t.add(i, TimelineEvent::kUnmatchedFree, heap, 0);
    }
    std::uint64_t allocs = 0;
    std::uint64_t frees = 0;
    for (const auto& b : t.buckets()) {
      allocs += b.alloc_count;
      frees += b.free_count;
    }
    CHECK(t.bucket_ns() > 1);
    CHECK(allocs == 10000);
    CHECK(frees == 5000);
  }

  TEST_CASE("a free of no block leaves the highest heap to the events that changed it") {
    HeapTimeline t(0, 10);
    t.add(5, kAlloc, 100, 1);
    t.add(12, TimelineEvent::kUnmatchedFree, 100, 1);  // the heap carried in, not reached in this bucket
    t.add(15, kFree, 40, 0);
    t.add(25, TimelineEvent::kUnmatchedFree, 40, 0);  // a bucket with no change: its highest is its end
    const auto b = t.buckets();
    REQUIRE(b.size() == 3);
    CHECK(b[1].heap_max_bytes == 40);
    CHECK(b[1].free_count == 1);
    CHECK(b[2].has_events);
    CHECK(b[2].heap_max_bytes == 40);
    CHECK(b[2].free_count == 0);
  }

  TEST_CASE("extends to the recording's end, carrying the last heap") {
    HeapTimeline t(1000, 100);
    t.add(1010, kAlloc, 50, 1);
    t.extend_to(1000 + 100 * 600);  // past twice kMaxBuckets of 100 ns: widens once
    const auto b = t.buckets();
    CHECK(t.bucket_ns() == 200);
    CHECK(b.size() == 301);
    CHECK(b.back().heap_bytes == 50);
    CHECK(b.back().heap_max_bytes == 50);
    CHECK_FALSE(b.back().has_events);
  }
}
