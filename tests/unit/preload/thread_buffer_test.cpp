// The per-thread ring: order across wrap-around and growth with a concurrent
// consumer, which is how the writer drains it.
#include "thread_buffer.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "os.h"
#include "recorder_state.h"

using namespace memrec::preload;

TEST_SUITE("preload/thread_buffer") {
  TEST_CASE("a consumer sees every event once, in order, across many wrap-arounds and the ring's growth") {
    // Every fifth event takes two slots (a realloc), so two-slot events
    // also straddle the ring's end, their second slot at index 0. The ring
    // starts small and doubles each time the producer finds it full.
    auto* buf = new (os::map(sizeof(ThreadBuffer))) ThreadBuffer;
    REQUIRE(buf->mask.load() + 1 == ThreadBuffer::kFirstSlots);
    g_state.store(RecorderState::kRecording);
    constexpr std::uint64_t kEvents = ThreadBuffer::kSlots * 50;
    auto two_slots = [](std::uint64_t i) { return i % 5 == 3; };
    std::atomic<bool> bad{false};
    std::atomic<std::uint64_t> straddled{0};
    std::thread consumer([&] {
      std::uint64_t next = 0;
      while (next < kEvents) {
        const std::uint64_t head = buf->head.load(std::memory_order_acquire);
        const std::uint64_t mask = buf->mask.load(std::memory_order_relaxed);  // after `head`, as the writer
        std::uint64_t i = buf->tail.load(std::memory_order_relaxed);
        while (i < head) {
          const RawEvent& e = buf->slots[i & mask].event;
          const bool two = two_slots(next);
          if (e.addr != next || (e.kind == EventKind::kRealloc) != two || slots_of(e.kind) != (two ? 2u : 1u)) {
            bad = true;
          }
          if (two) {
            if (buf->slots[(i + 1) & mask].tail.old_addr != (next ^ 0xabc)) bad = true;
            if (((i + 1) & mask) == 0) ++straddled;
          }
          i += slots_of(e.kind);
          ++next;
        }
        buf->tail.store(head, std::memory_order_release);
      }
    });
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      const bool two = two_slots(i);
      RawEvent* e = reserve(*buf, two ? 2 : 1);
      REQUIRE(e != nullptr);
      e->kind = two ? EventKind::kRealloc : EventKind::kAlloc;
      e->addr = i;
      if (two) reserved_tail(*buf).old_addr = i ^ 0xabc;
      commit(*buf, two ? 2 : 1);
    }
    consumer.join();
    CHECK_FALSE(bad.load());
    CHECK(straddled.load() > 0);
    CHECK(buf->mask.load() + 1 == ThreadBuffer::kSlots);
    CHECK(counter(memrec::format::Counter::kDroppedLossy) == 0);
    os::unmap(buf, sizeof(ThreadBuffer));
  }
}
