// The order stamp of an event. Reading CLOCK_MONOTONIC costs 15-20 ns on bare
// metal but about 200 ns on VMs that trap rdtsc, per event, so hooks never
// read it. Stamps come from three sources, FORMAT.md "Order":
// - While only one thread has a buffer, events take the writer's last tick
//   (g_tick_ns, a relaxed load): a single thread needs no more to order its
//   own events.
// - As soon as a second thread records, every event takes either the next
//   value of g_stamp, a shared counter (MEMREC_STAMP=counter: one lock xadd,
//   and its cache line moves between the recording threads), or a reading
//   of the TSC (MEMREC_STAMP=tsc: no shared line; stamp_source.h picks it
//   once, before the first stamp). With the counter, stamps and ticks are ns
//   on the CLOCK_MONOTONIC scale: the writer raises g_stamp to the clock at
//   every tick, so stamps run ahead of it by at most one ns per event since.
//   With the TSC, stamps and ticks are TSC readings, which the writers turn
//   into ns (tsc_clock.h) before coding them.
// Why the counter is exact across threads: its values follow its
// modification order, which agrees with happens-before; so when thread A
// frees p and thread B then gets p from malloc (the allocator synchronizes
// them), B's stamp is larger. A tick is published as a value g_stamp has
// already reached, so a tick-stamped event sorts before any g_stamp stamp
// taken after it.
// Why the TSC is exact across threads: Linux keeps `tsc` as its clocksource
// only while the TSCs of all cores agree (no core reads a value below one
// another core read earlier: its warp check), and constant_tsc with
// nonstop_tsc make it tick at one rate. Each reading is `lfence; rdtsc`
// (tsc_clock.h). If A's event happens before B's, some store of A after its
// reading reached a load of B before B's reading: A's reading executed before
// that store retired and so before it became visible; the lfence keeps B's
// reading after its load completed. So B's reading is taken later and is not
// smaller. That covers both directions a block crosses threads: a free stamped
// before the real free and the allocation that reuses the block stamped after
// the real malloc returned, and an allocation handed to another thread that
// frees it. Readings of such a pair are apart by at least the rest of A's
// hook, a cache line moved between cores and the start of B's: tens of ns.
// The ns conversion keeps them apart too (its rate never falls below half
// the TSC's, tsc_clock.cpp); only readings under about 2 ns apart can share
// a ns. At equal times the reader puts releases first, which is right for a
// free and the reuse of its block.
// And for both sources:
// - a thread's first event is stamped after it raised g_recording_threads,
//   and any address it hands over (or receives) synchronizes through the
//   allocator after that, so the other thread takes g_stamp (or the TSC)
//   from then on;
// - when the writer retires an exited thread, it publishes a fresh tick
//   before lowering g_recording_threads, so a later tick-stamped event sorts
//   after everything the retired thread recorded.
// Each thread's stamps never go backwards (t_thread.last_stamp).
// Until the writer runs (it starts lazily, and is parked around unshare and
// setns: docs/design/single_threaded.md) nobody ticks: a lone thread's events
// then read the clock (or the TSC) themselves until it does.
// Why not a stamp without the shared line that needs no synchronized TSC:
// ordering each block's events by a Lamport clock kept per block
// (docs/design/ordering.md) orders a free before the reuse of its block, but
// not before an allocation that only the program's own synchronization puts
// after it; tests/programs/peak_handoff then showed a peak that never happened.
#pragma once

#include <atomic>
#include <cstdint>

#include "clock.h"
#include "stamp_source.h"
#include "thread_state.h"

namespace memrec::preload {

// Threads with a buffer that the writer has not retired.
extern std::atomic<std::uint32_t> g_recording_threads;
// The writer's last tick: a value g_stamp has reached, at least the clock;
// with the TSC, a reading.
extern std::atomic<std::uint64_t> g_tick_ns;
// The shared stamp counter while two or more threads record.
extern std::atomic<std::uint64_t> g_stamp;
// Whether a writer publishes ticks: set by it (release) after its first tick,
// cleared when it parks.
extern std::atomic<bool> g_ticking;

// Ticks are taken on a grid of 1,024 ns: the time deltas between them, most
// of what a single thread's `dt` column holds, then end in ten zero bits,
// which zstd codes in a fraction of a byte (sqlite3's dump: 2 % smaller). A
// tick is still never later than the clock, and no timeline shows a
// microsecond.
inline constexpr std::uint64_t kTickGridNs = 1024;

// Raises g_stamp to the clock and publishes the tick (writer, retire, init).
// Returns the tick. With the TSC, a tick is a reading (off the grid: the
// writers convert it to ns).
inline std::uint64_t publish_tick() {
  std::uint64_t tick;
  if (stamp_tsc()) {
    tick = tsc_read();
  } else {
    const std::uint64_t now = now_ns() & ~(kTickGridNs - 1);
    std::uint64_t cur = g_stamp.load(std::memory_order_relaxed);
    while (cur < now && !g_stamp.compare_exchange_weak(cur, now, std::memory_order_acq_rel)) {
    }
    tick = g_stamp.fetch_add(1, std::memory_order_acq_rel) + 1;
  }
  // Raised, never lowered: the pool's writers retire threads and tick
  // concurrently, and a tick stored after a later one would let a lone
  // thread stamp before a retired thread's last event. Release pairs with
  // order_stamp()'s acquire load.
  std::uint64_t published = g_tick_ns.load(std::memory_order_relaxed);
  while (published < tick &&
         !g_tick_ns.compare_exchange_weak(published, tick, std::memory_order_release, std::memory_order_relaxed)) {
  }
  return tick;
}

// In a fork child: the parent's stamps are in the parent's file.
inline void reset_stamps() {
  if (stamp_tsc()) tsc_map_reset_after_fork();
  const std::uint64_t now = stamp_tsc() ? tsc_read() : now_ns();
  g_stamp.store(now, std::memory_order_relaxed);
  g_tick_ns.store(now, std::memory_order_relaxed);
}

// HOT PATH while no writer ticks (a process's first events). The clock,
// with g_stamp raised to it: a second thread's first stamp, its next value,
// then sorts after this one, as it would after a tick.
inline std::uint64_t clock_stamp() {
  if (stamp_tsc()) return tsc_read();
  std::uint64_t t = now_ns();
  std::uint64_t cur = g_stamp.load(std::memory_order_relaxed);
  while (cur < t && !g_stamp.compare_exchange_weak(cur, t, std::memory_order_acq_rel)) {
  }
  return cur > t ? cur : t;
}

// Raises g_stamp to at least `v`.
inline void raise_stamp(std::uint64_t v) {
  std::uint64_t cur = g_stamp.load(std::memory_order_relaxed);
  while (cur < v && !g_stamp.compare_exchange_weak(cur, v, std::memory_order_acq_rel)) {
  }
}

// Not hot: a marker's stamp (FORMAT.md, "Marker"). No other event has it: it
// comes after every earlier event of this thread and, as the thread's
// last_stamp then passes it, before every later one; g_stamp passes it too,
// so another thread's later stamps do as well. Taken at the clock, so a
// marker set while no tick is due is not a few milliseconds early.
// With the TSC, a reading, and this thread's later stamps pass it by one
// tick: ordered with other threads' stamps as any reading is, but unique only
// within the thread (and ns may join what ticks keep apart).
inline std::uint64_t unique_stamp() {
  if (stamp_tsc()) {
    std::uint64_t t = tsc_read();
    if (t <= t_thread.last_stamp) t = t_thread.last_stamp + 1;
    t_thread.last_stamp = t + 1;
    return t;
  }
  raise_stamp(now_ns());
  std::uint64_t t = g_stamp.fetch_add(2, std::memory_order_acq_rel) + 1;
  if (t <= t_thread.last_stamp) t = t_thread.last_stamp + 1;
  raise_stamp(t + 1);
  t_thread.last_stamp = t + 1;
  return t;
}

// HOT PATH.
inline std::uint64_t order_stamp() {
  std::uint64_t t;
  // Acquire pairs with the writer's release decrement (see above).
  if (g_recording_threads.load(std::memory_order_acquire) <= 1) {
    // Acquire pairs with the writer's release store of g_ticking after its tick.
    if (g_ticking.load(std::memory_order_acquire)) [[likely]] {
      t = g_tick_ns.load(std::memory_order_acquire);
    } else {
      t = clock_stamp();
    }
  } else if (stamp_tsc()) {
    t = tsc_read();
  } else {
    t = g_stamp.fetch_add(1, std::memory_order_acq_rel) + 1;
  }
  if (t < t_thread.last_stamp) t = t_thread.last_stamp;
  t_thread.last_stamp = t;
  return t;
}

}  // namespace memrec::preload
