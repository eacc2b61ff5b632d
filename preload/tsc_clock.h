// The TSC as the order stamp (MEMREC_STAMP=tsc, docs/design/ordering.md):
// hooks read it, and the writers turn readings into CLOCK_MONOTONIC ns before
// coding them, by one map shared by every writer of the process, so the dump
// holds ns like any other. The map is read by writer threads only, never by
// a hook.
#pragma once

#include <cstdint>

namespace memrec::preload {

#if defined(__x86_64__)
inline constexpr bool kHaveTsc = true;

// HOT PATH in tsc mode. The lfence makes the read wait until every earlier
// instruction of this thread has completed, loads included (Intel SDM,
// RDTSC: "LFENCE immediately before RDTSC"): a block or pointer this thread
// received from another one was loaded before the read. A later store of this
// thread becomes visible only after it retires, so after the read; no fence
// is needed after it (order_stamp.h gives the whole argument).
inline std::uint64_t tsc_read() {
  std::uint32_t lo;
  std::uint32_t hi;
  asm volatile("lfence\n\trdtsc" : "=a"(lo), "=d"(hi) : : "memory");
  return (static_cast<std::uint64_t>(hi) << 32) | lo;
}
#else
inline constexpr bool kHaveTsc = false;
inline std::uint64_t tsc_read() { return 0; }
#endif

// A reading of both clocks, taken with the TSC on either side of the clock so
// its error is known (at most `spread_ticks` apart).
struct ClockPair {
  std::uint64_t tsc = 0;
  std::uint64_t ns = 0;
  std::uint64_t spread_ticks = 0;
};
ClockPair read_clock_pair();

// The map from TSC ticks to ns: piecewise linear and continuous, so
// non-decreasing, and the same function for every writer of the process at
// all times (a segment, once published, never changes; see tsc_clock.cpp).
// Starts it at `origin` with `ns_per_tick` (measured at start): cold, before
// the first stamp.
void tsc_map_start(const ClockPair& origin, double ns_per_tick);
// Main writer, at each tick: adds a segment when one is due, steering the
// map towards CLOCK_MONOTONIC.
void tsc_map_steer();
// Writer threads: the ns of a TSC reading that was taken before the call
// (read by this thread, or drained from a ring after the acquire load of its
// head). May wait while the main writer is adding a segment.
std::uint64_t tsc_to_ns(std::uint64_t tsc);
// Fork child: the parent's writer may have been adding a segment.
void tsc_map_reset_after_fork();

// For the unit test: the segments published so far.
std::uint64_t tsc_map_segments();

}  // namespace memrec::preload
