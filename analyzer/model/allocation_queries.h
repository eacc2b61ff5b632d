// Exact range and instant questions on an AllocationTable, with the window
// rules of `memrec report --from/--to` (docs/analyzer.md): events in
// [from, to]; leaked = allocated in it and live at its end; the peak is the
// highest heap after an allocation inside it, the heap at `from` a candidate.
// Times are absolute CLOCK_MONOTONIC ns. Also the filtered, sorted pages of
// rows of /allocations. Called by server/view_api; pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/allocation_filter.h"
#include "model/allocation_table.h"
#include "model/stack_replay.h"

namespace memrec::analyzer {

// The state after the first `position` events of the merged sequence.
struct EventCursor {
  std::uint64_t position = 0;
  std::uint32_t rows = 0;   // allocations done
  std::uint32_t frees = 0;  // frees done
  std::uint64_t heap_bytes = 0;
  std::uint64_t live_count = 0;
};

EventCursor seek_position(const AllocationTable& t, std::uint64_t position);
// After every event at or before `time_ns`; cursor_before: strictly before.
EventCursor cursor_at(const AllocationTable& t, std::uint64_t time_ns);
EventCursor cursor_before(const AllocationTable& t, std::uint64_t time_ns);
// Rows allocated at or before `time_ns`, frees at or before it.
std::uint32_t rows_until(const AllocationTable& t, std::uint64_t time_ns);
std::uint32_t frees_until(const AllocationTable& t, std::uint64_t time_ns);

// The highest heap after an event of positions [from, to) (allocations only
// if `allocs_only`), first reached after event `after - 1`; `found` is false
// if no event beats `floor` (strictly, for allocs_only).
struct HeapMax {
  bool found = false;
  std::uint64_t bytes = 0;
  std::uint64_t after = 0;  // the cursor position just after the event
};
HeapMax heap_max(const AllocationTable& t, std::uint64_t from, std::uint64_t to, bool allocs_only,
                 std::uint64_t floor = 0);

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

// Each of `sites`' live bytes at the ends of `n` equal parts of [from, to]:
// result[i * n + j].
std::vector<std::uint64_t> site_sparklines(const AllocationTable& t, const std::vector<std::uint32_t>& sites,
                                           const TimeWindow& window, std::uint32_t n);

// The rows /allocations keeps (docs/api.md): allocated in rows [lo, hi), of
// `site` if set, of a realloc chain if `realloc`, and passing `rows`.
struct RowFilter {
  std::uint32_t lo = 0;
  std::uint32_t hi = 0;
  std::optional<std::uint32_t> site;
  bool realloc = false;  // only rows of a realloc chain (AllocationTable::realloc_rows)
  AllocationFilter rows;
};
enum class RowSort { kTime, kSize, kLifetime, kAddress };
struct RowPage {
  std::uint64_t total = 0;  // every match
  std::vector<std::uint32_t> rows;
};
// Free time minus allocation time; kNeverFreed for a block never freed (it
// sorts after every lifetime, passes any minimum and fails any maximum).
std::uint64_t row_lifetime(const AllocationTable& t, std::uint32_t row);
// The matches of `f` ranked [offset, offset + limit) by `sort` (ties by row,
// ascending in either order) and how many match in all. Sorted by time it
// counts per chunk and walks the page's chunks; by another key it keeps a
// heap for a page near the front, else it narrows a histogram of the keys to
// the page's (two or three scans, no copy of the matches).
RowPage allocation_page(const AllocationTable& t, const RowFilter& f, RowSort sort, bool descending,
                        std::uint64_t offset, std::uint64_t limit);

}  // namespace memrec::analyzer
