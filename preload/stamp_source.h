// Which order stamp the hooks take (MEMREC_STAMP): the counter shared by the
// recording threads, or the TSC where it is trustworthy (and, for auto,
// cheap). Chosen once in early_init, before the first stamp, never changed
// while threads record; fork children keep it. docs/design/ordering.md.
#pragma once

#include <atomic>
#include <cstdint>

#include "tsc_clock.h"

namespace memrec::preload {

// Set once, before the first stamp; hooks read it relaxed.
extern std::atomic<bool> g_stamp_tsc;

// HOT PATH.
inline bool stamp_tsc() { return g_stamp_tsc.load(std::memory_order_relaxed); }

// Writer threads: an order stamp (taken as tsc_to_ns() requires) as the ns
// the dump holds.
inline std::uint64_t stamp_to_ns(std::uint64_t stamp) { return stamp_tsc() ? tsc_to_ns(stamp) : stamp; }

// Cold, in early_init after read_options(): applies g_options.stamp.
void choose_stamp_source();

// The measured cost of one fenced TSC read in ns, 0 when not measured (the
// counter was asked for, or the TSC is not trusted): the dump's counters.
std::uint64_t tsc_read_cost_ns();

// What auto accepts: see stamp_source.cpp.
inline constexpr std::uint64_t kAutoMaxTscReadNs = 15;

}  // namespace memrec::preload
