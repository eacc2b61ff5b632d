// The heap's state after any prefix of an AllocationTable's events: found by
// position or by time (absolute CLOCK_MONOTONIC ns), and the highest heap
// over a stretch of positions. Used by window_figures.h and the server; pure.
#pragma once

#include <cstdint>

#include "model/allocation_table.h"

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

}  // namespace memrec::analyzer
