// The per-thread ring: order across wrap-around with a concurrent consumer,
// which is how the writer drains it.
#include "thread_buffer.h"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>

#include "os.h"
#include "recorder_state.h"

using namespace memrec::preload;

TEST_SUITE("preload/thread_buffer") {
  TEST_CASE("a consumer sees every event once, in order, across many wrap-arounds") {
    auto* buf = new (os::map(sizeof(ThreadBuffer))) ThreadBuffer();
    g_state.store(RecorderState::kRecording);
    constexpr std::uint64_t kEvents = ThreadBuffer::kSlots * 50;
    std::atomic<bool> bad{false};
    std::thread consumer([&] {
      std::uint64_t next = 0;
      while (next < kEvents) {
        const std::uint64_t head = buf->head.load(std::memory_order_acquire);
        for (std::uint64_t i = buf->tail.load(std::memory_order_relaxed); i < head; ++i) {
          if (buf->slots[i & (ThreadBuffer::kSlots - 1)].addr != next++) bad = true;
        }
        buf->tail.store(head, std::memory_order_release);
      }
    });
    for (std::uint64_t i = 0; i < kEvents; ++i) {
      RawEvent* e = reserve(*buf);
      REQUIRE(e != nullptr);
      e->addr = i;
      commit(*buf);
    }
    consumer.join();
    CHECK_FALSE(bad.load());
    CHECK(counter(memrec::format::Counter::kDroppedLossy) == 0);
    os::unmap(buf, sizeof(ThreadBuffer));
  }
}
