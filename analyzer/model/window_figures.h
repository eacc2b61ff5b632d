// Exact range and instant questions on an AllocationTable, with the window
// rules of `memrec report --from/--to` (docs/analyzer.md): events in
// [from, to]; leaked = allocated in it and live at its end; the peak is the
// highest heap after an allocation inside it, the heap at `from` a candidate.
// Times are absolute CLOCK_MONOTONIC ns. Called by server/ and diff/; pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/allocation_table.h"
#include "model/heap_cursor.h"
#include "model/stack_replay.h"

namespace memrec::analyzer {

struct WindowPeak {
  std::uint64_t bytes = 0;
  std::optional<std::uint64_t> time_ns;  // absolute; none if the heap never grew in the window
  EventCursor at;                        // the state at the peak
};
WindowPeak window_peak(const AllocationTable& t, const TimeWindow& window);

// Temporary allocations (AllocationTable::temporary) freed by the cursor's events.
std::uint64_t temporary_frees(const AllocationTable& t, const EventCursor& at);
// The free times, ascending, of the temporary allocations made before the
// window and freed within it: a window's figures leave them out
// (window_figures), a count of temporary frees must too.
std::vector<std::uint64_t> temporary_frees_from_before(const AllocationTable& t, const TimeWindow& window);

// Per-site live bytes and blocks after the cursor's events (rows of no site are left out).
struct SiteLive {
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> count;
};
SiteLive live_by_site(const AllocationTable& t, const EventCursor& at);
// Whether `row` is live after the cursor's events.
bool live_after(const AllocationTable& t, const EventCursor& at, std::uint32_t row);
// The blocks of `site` allocated at or before `time_ns` and freed after it
// (never freed included); a walk of the site's rows only.
struct LiveBlocks {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
};
LiveBlocks site_live_at(const AllocationTable& t, std::uint32_t site, std::uint64_t time_ns);

// The report's figures for a window: totals and, per site, the StackColumns
// figures (leaked here counts runtime sites too: the caller splits them).
struct SiteFigures {
  std::uint64_t allocations = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t temporary = 0;
  std::uint64_t leaked_bytes = 0;
  std::uint64_t leaked_count = 0;
  std::uint64_t peak_bytes = 0;
};
struct WindowFigures {
  HeapTotals totals;
  std::vector<SiteFigures> sites;
  EventCursor peak_at;
};
WindowFigures window_figures(const AllocationTable& t, const TimeWindow& window);

// Per site, the allocations and bytes allocated in the window (window_figures'
// first two SiteFigures) from the row blocks' per-site sums, reading the
// columns of only the blocks at its ends and those not summed.
struct SiteAllocations {
  std::vector<std::uint64_t> count;
  std::vector<std::uint64_t> bytes;
};
SiteAllocations site_allocations(const AllocationTable& t, const TimeWindow& window);

// Each of `sites`' live bytes at the ends of `n` equal parts of [from, to]:
// result[i * n + j].
std::vector<std::uint64_t> site_sparklines(const AllocationTable& t, const std::vector<std::uint32_t>& sites,
                                           const TimeWindow& window, std::uint32_t n);

}  // namespace memrec::analyzer
