// The order stamp of an event. Reading CLOCK_MONOTONIC costs 15-20 ns on bare
// metal but about 200 ns on VMs that trap rdtsc, per event. A single recording
// thread needs no clock to order its own events, so while only one thread has
// a buffer, events take the writer's last clock reading (g_tick_ns, a relaxed
// load) instead; as soon as a second thread records, every thread reads the
// clock. Why that stays exact across threads (FORMAT.md, "Order"):
// - a thread's first event is stamped after it raised g_recording_threads, and
//   any address it hands over (or receives) synchronizes through the
//   allocator after that, so the other thread reads the clock from then on;
// - a tick is a clock reading taken before it is stored, so an event stamped
//   with it sorts before any clock reading taken later;
// - when the writer retires an exited thread, it stores a fresh tick before
//   lowering g_recording_threads, so a later tick-stamped event sorts after
//   everything the retired thread recorded.
// Each thread's stamps never go backwards (t_thread.last_stamp).
#pragma once

#include <atomic>
#include <cstdint>

#include "clock.h"
#include "thread_state.h"

namespace memrec::preload {

// Threads with a buffer that the writer has not retired.
extern std::atomic<std::uint32_t> g_recording_threads;
// The writer's last CLOCK_MONOTONIC reading, stored at every cycle.
extern std::atomic<std::uint64_t> g_tick_ns;

// HOT PATH.
inline std::uint64_t order_stamp() {
  std::uint64_t t;
  // Acquire pairs with the writer's release decrement (see above).
  if (g_recording_threads.load(std::memory_order_acquire) <= 1) {
    t = g_tick_ns.load(std::memory_order_acquire);
    if (t < t_thread.last_stamp) t = t_thread.last_stamp;
  } else {
    t = now_ns();
  }
  t_thread.last_stamp = t;
  return t;
}

}  // namespace memrec::preload
