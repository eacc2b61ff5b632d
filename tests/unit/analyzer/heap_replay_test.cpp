// The merge of per-thread streams and the pairing of frees with allocations.
#include <doctest/doctest.h>

#include <random>
#include <span>
#include <vector>

#include "load/stream_merger.h"
#include "model/heap_replay.h"

using namespace memrec::analyzer;

namespace {

HeapEvent alloc(std::uint64_t t, std::uint64_t addr, std::uint64_t size, std::uint32_t stack = 1) {
  return {t, addr, size, StackId{stack}, HeapOp::kAlloc};
}
HeapEvent free_at(std::uint64_t t, std::uint64_t addr) { return {t, addr, 0, {}, HeapOp::kFree}; }

}  // namespace

TEST_SUITE("analyzer/heap_replay") {
  TEST_CASE("the merge orders by time, releases first at equal times, and keeps each thread's order") {
    const std::vector<std::vector<HeapEvent>> streams = {
        {alloc(1, 0xa, 1), alloc(5, 0xb, 1), free_at(5, 0xb)},  // thread 0: alloc then free at the same time
        {free_at(5, 0xc), alloc(7, 0xd, 1)},
        {},
    };
    StreamMerger merger(streams);
    std::vector<std::uint64_t> addrs;
    std::vector<std::size_t> from;
    std::size_t stream = 0;
    while (const HeapEvent* e = merger.next(&stream)) {
      addrs.push_back(e->addr);
      from.push_back(stream);
    }
    CHECK(addrs == std::vector<std::uint64_t>{0xa, 0xc, 0xb, 0xb, 0xd});
    CHECK(from == std::vector<std::size_t>{0, 1, 0, 0, 1});
  }

  TEST_CASE("merge_streams writes StreamMerger's order at once, with each event's stream id") {
    std::mt19937_64 rng(7);
    for (std::size_t k = 0; k <= 5; ++k) {
      for (int round = 0; round < 50; ++round) {
        // Few distinct times, so that ties (and ties of kind) are common.
        std::vector<std::vector<HeapEvent>> streams(k);
        for (auto& stream : streams) {
          std::uint64_t t = rng() % 4;
          const std::size_t n = rng() % 40;  // some streams empty
          for (std::size_t i = 0; i < n; ++i) {
            t += rng() % 3;
            stream.push_back(rng() % 2 ? alloc(t, stream.size() * 16, 8) : free_at(t, stream.size() * 16));
          }
        }
        std::vector<std::span<const HeapEvent>> spans(streams.begin(), streams.end());
        std::vector<std::uint32_t> ids;
        for (std::size_t s = 0; s < k; ++s) ids.push_back(static_cast<std::uint32_t>(10 + 3 * s));

        std::vector<HeapEvent> events{alloc(99, 99, 99)};  // replaced, not appended to
        std::vector<std::uint32_t> threads{99};
        merge_streams(spans, ids, events, threads);

        StreamMerger merger(streams);
        std::size_t stream = 0;
        std::size_t i = 0;
        while (const HeapEvent* e = merger.next(&stream)) {
          REQUIRE(i < events.size());
          CHECK(events[i].time_ns == e->time_ns);
          CHECK(events[i].addr == e->addr);
          CHECK(events[i].op == e->op);
          CHECK(threads[i] == ids[stream]);
          ++i;
        }
        CHECK(i == events.size());
        CHECK(threads.size() == events.size());
      }
    }
  }

  TEST_CASE("merge_streams in pieces of a limit gives the whole merge, piece after piece") {
    std::mt19937_64 rng(11);
    for (std::size_t k = 1; k <= 5; ++k) {
      for (const std::size_t limit : {std::size_t{1}, std::size_t{3}, std::size_t{17}}) {
        std::vector<std::vector<HeapEvent>> streams(k);
        for (auto& stream : streams) {
          std::uint64_t t = rng() % 4;
          const std::size_t n = rng() % 40;
          for (std::size_t i = 0; i < n; ++i) {
            t += rng() % 3;
            stream.push_back(rng() % 2 ? alloc(t, stream.size() * 16, 8) : free_at(t, stream.size() * 16));
          }
        }
        std::vector<std::span<const HeapEvent>> spans(streams.begin(), streams.end());
        std::vector<std::uint32_t> ids;
        for (std::size_t s = 0; s < k; ++s) ids.push_back(static_cast<std::uint32_t>(s));
        std::vector<HeapEvent> whole;
        std::vector<std::uint32_t> whole_threads;
        merge_streams(spans, ids, whole, whole_threads);

        std::vector<std::uint64_t> pieces;  // addr and thread of each event, piece after piece
        std::vector<std::size_t> taken(k);
        std::vector<HeapEvent> events;
        std::vector<std::uint32_t> threads;
        for (;;) {
          merge_streams(spans, ids, limit, events, threads, taken);
          if (events.empty()) break;
          CHECK(events.size() <= limit);
          for (std::size_t i = 0; i < events.size(); ++i) pieces.push_back(events[i].addr * 8 + threads[i]);
          for (std::size_t s = 0; s < k; ++s) spans[s] = spans[s].subspan(taken[s]);
        }
        std::vector<std::uint64_t> expected;
        for (std::size_t i = 0; i < whole.size(); ++i) expected.push_back(whole[i].addr * 8 + whole_threads[i]);
        CHECK(pieces == expected);
      }
    }
  }

  TEST_CASE("a free on one thread sorts before another thread's reuse of the address at the same time") {
    const std::vector<std::vector<HeapEvent>> streams = {
        {alloc(20, 0x1000, 8)},                        // thread B gets p back
        {alloc(10, 0x1000, 64), free_at(20, 0x1000)},  // thread A frees p
    };
    const HeapReplay h = replay_heap(streams);
    CHECK(h.unmatched_frees == 0);
    REQUIRE(h.live.size() == 1);
    CHECK(h.live.find(0x1000)->size == 8);
    CHECK(h.live_bytes == 8);
    CHECK(h.replaced_blocks == 0);
  }

  TEST_CASE("an allocation freed at the same time on the same thread is not live") {
    const HeapReplay h = replay_heap(std::vector<std::vector<HeapEvent>>{{alloc(5, 0x10, 4), free_at(5, 0x10)}});
    CHECK(h.live.empty());
    CHECK(h.unmatched_frees == 0);
    CHECK(h.peak_bytes == 4);
  }

  TEST_CASE("a free of an unknown address is counted, never an error") {
    const HeapReplay h = replay_heap(std::vector<std::vector<HeapEvent>>{{free_at(1, 0x99), alloc(2, 0x10, 4)}});
    CHECK(h.unmatched_frees == 1);
    CHECK(h.live_bytes == 4);
  }

  TEST_CASE("a realloc releases the old block and allocates the new one") {
    const HeapReplay h = replay_heap(std::vector<std::vector<HeapEvent>>{
        {alloc(1, 0x10, 100), free_at(2, 0x10), alloc(3, 0x20, 300, 2), free_at(4, 0x20), alloc(4, 0x20, 50, 3)}});
    REQUIRE(h.live.size() == 1);
    CHECK(h.live.find(0x20)->size == 50);
    CHECK(h.live.find(0x20)->stack == StackId{3});
    CHECK(h.live_bytes == 50);
    CHECK(h.peak_bytes == 300);
    CHECK(h.peak_time_ns == 3);
  }

  TEST_CASE("the peak is the highest live total, at the first time it was reached") {
    const HeapReplay h = replay_heap(std::vector<std::vector<HeapEvent>>{
        {alloc(1, 0x1, 10), alloc(2, 0x2, 20), free_at(3, 0x2), alloc(4, 0x3, 20), free_at(9, 0x1)},
        {alloc(6, 0x4, 5)},
    });
    CHECK(h.peak_bytes == 35);
    CHECK(h.peak_time_ns == 6);
    CHECK(h.live_bytes == 25);
  }

  TEST_CASE("an allocation at a still-live address replaces the block whose free was missed") {
    const HeapReplay h = replay_heap(std::vector<std::vector<HeapEvent>>{{alloc(1, 0x10, 100), alloc(2, 0x10, 30, 7)}});
    CHECK(h.replaced_blocks == 1);
    CHECK(h.live_bytes == 30);
    CHECK(h.live.find(0x10)->stack == StackId{7});
  }

  TEST_CASE("heap and anonymous mappings are kept apart") {
    const HeapReplay h = replay_heap(std::vector<std::vector<HeapEvent>>{{
        alloc(1, 0x10, 8),
        {2, 0x7f0000000000, 8192, StackId{2}, HeapOp::kMmap},
        {3, 0x7f0000001000, 4096, {}, HeapOp::kMunmap},
        {4, 0x10, 4, {}, HeapOp::kMunmap},  // overlaps no mapping: ignored
    }});
    CHECK(h.live_bytes == 8);
    CHECK(h.mmap.live_bytes() == 4096);
    CHECK(h.mmap.live_count() == 1);
  }
}
