// The TSC-to-ns map of tsc_clock.h. Segment k covers the readings from its
// `tsc` to the next segment's: ns = ns_k + (tsc - tsc_k) * mult_k / 2^32.
// The main writer adds segments (tsc_map_steer); every writer converts.
//
// Why all writers convert by the same function although segments are added
// while they convert: a segment is written once, before g_count covers it,
// and never changed. The main writer marks an addition in progress (g_seq
// odd), makes that store visible to every core (mfence), and only then reads
// the TSC value the new segment starts at. A writer converting a reading t
// loads g_seq after t was taken (by itself, or by a program thread that
// published it in a ring the writer acquired). If t is at or after the new
// segment's start, t was read after the odd g_seq was visible everywhere (the
// TSC is synchronized across cores: stamp_source.cpp checks the kernel says
// so), hence before the converting writer loaded g_seq: it sees the addition
// in progress and waits for it. A reading before the start converts by the
// old segment either way. A new segment starts at the value the previous one
// gives there, so the map never goes down.
#include "tsc_clock.h"

#include <sched.h>

#include <atomic>
#include <cstddef>

#include "clock.h"

namespace memrec::preload {

namespace {

struct Segment {
  std::uint64_t tsc;
  std::uint64_t ns;
  std::uint64_t mult;  // ns per tick, times 2^32
};

// A segment at most every 10 ms at first, then every second: 4,096 steer the
// map for over an hour, after which the last one runs on (its rate is then
// the run's measured average).
constexpr std::size_t kSegments = 4096;
constexpr std::uint64_t kFirstStepNs = 10'000'000;
constexpr std::uint64_t kLastStepNs = 1'000'000'000;

Segment g_segments[kSegments];
std::atomic<std::uint64_t> g_count{0};            // release by the main writer; acquire by converters
alignas(64) std::atomic<std::uint64_t> g_seq{0};  // odd while a segment is being added (above)

// The main writer's own state.
ClockPair g_origin;
double g_start_ns_per_tick = 0;
std::uint64_t g_next_steer_tsc = 0;

std::uint64_t mult_of(double ns_per_tick) {
  const double m = ns_per_tick * 4294967296.0 + 0.5;
  return m < 1 ? 1 : static_cast<std::uint64_t>(m);
}

std::uint64_t value_of(const Segment& s, std::uint64_t tsc) {
  if (tsc <= s.tsc) return s.ns;
  return s.ns + static_cast<std::uint64_t>((static_cast<unsigned __int128>(tsc - s.tsc) * s.mult) >> 32);
}

void store_fence() {
#if defined(__x86_64__)
  // MFENCE before the (LFENCE; RDTSC) that follows: the store is visible to
  // every core before the TSC is read (Intel SDM, RDTSC).
  asm volatile("mfence" : : : "memory");
#endif
}

}  // namespace

ClockPair read_clock_pair() {
  ClockPair best;
  for (int i = 0; i < 5; ++i) {
    const std::uint64_t before = tsc_read();
    const std::uint64_t ns = now_ns();
    const std::uint64_t after = tsc_read();
    if (i == 0 || after - before < best.spread_ticks) best = {before + (after - before) / 2, ns, after - before};
  }
  return best;
}

void tsc_map_start(const ClockPair& origin, double ns_per_tick) {
  g_origin = origin;
  g_start_ns_per_tick = ns_per_tick;
  g_segments[0] = {origin.tsc, origin.ns, mult_of(ns_per_tick)};
  g_next_steer_tsc = origin.tsc + static_cast<std::uint64_t>(kFirstStepNs / ns_per_tick);
  g_count.store(1, std::memory_order_release);
}

void tsc_map_steer() {
  const std::uint64_t n = g_count.load(std::memory_order_relaxed);
  if (n == 0 || n >= kSegments || tsc_read() < g_next_steer_tsc) return;
  const std::uint64_t seq = g_seq.load(std::memory_order_relaxed);
  g_seq.store(seq + 1, std::memory_order_relaxed);
  store_fence();
  const ClockPair now = read_clock_pair();
  const std::uint64_t start_ns = value_of(g_segments[n - 1], now.tsc);
  // The rate over the whole run so far, once it is long enough to beat the
  // start's short measurement.
  double rate = g_start_ns_per_tick;
  if (now.ns > g_origin.ns + kFirstStepNs && now.tsc > g_origin.tsc) {
    rate = static_cast<double>(now.ns - g_origin.ns) / static_cast<double>(now.tsc - g_origin.tsc);
  }
  // Steered to meet the clock one step from now, at no less than half and no
  // more than one and a half times the rate: positive, so the map rises.
  std::uint64_t step_ns = (now.ns - g_origin.ns) / 8;
  step_ns = step_ns < kFirstStepNs ? kFirstStepNs : step_ns > kLastStepNs ? kLastStepNs : step_ns;
  const double step = static_cast<double>(step_ns);
  double steered = rate * (static_cast<double>(now.ns) - static_cast<double>(start_ns) + step) / step;
  steered = steered < rate * 0.5 ? rate * 0.5 : steered > rate * 1.5 ? rate * 1.5 : steered;
  g_segments[n] = {now.tsc, start_ns, mult_of(steered)};
  g_count.store(n + 1, std::memory_order_release);
  // Release pairs with tsc_to_ns()'s acquire load.
  g_seq.store(seq + 2, std::memory_order_release);
  g_next_steer_tsc = now.tsc + static_cast<std::uint64_t>(step / rate);
}

std::uint64_t tsc_to_ns(std::uint64_t tsc) {
  // Acquire pairs with tsc_map_steer()'s release store of the even value.
  while ((g_seq.load(std::memory_order_acquire) & 1) != 0) sched_yield();
  const std::uint64_t n = g_count.load(std::memory_order_acquire);
  if (n == 0) return tsc;
  std::uint64_t i = n - 1;
  while (i > 0 && tsc < g_segments[i].tsc) --i;
  return value_of(g_segments[i], tsc);
}

void tsc_map_reset_after_fork() {
  const std::uint64_t seq = g_seq.load(std::memory_order_relaxed);
  // A segment the parent's writer was adding is either counted (complete) or not.
  if ((seq & 1) != 0) g_seq.store(seq + 1, std::memory_order_relaxed);
}

std::uint64_t tsc_map_segments() { return g_count.load(std::memory_order_acquire); }

}  // namespace memrec::preload
