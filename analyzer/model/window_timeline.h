// The heap over a range as equal buckets, exact, from an AllocationTable:
// memrec view's /timeline once the table is built (before it, the report's
// HeapTimeline serves the whole run). Pure.
#pragma once

#include <cstdint>
#include <vector>

#include "model/allocation_table.h"
#include "model/heap_timeline.h"
#include "model/stack_replay.h"

namespace memrec::analyzer {

// Bucket i covers [from + i × width_ns, from + (i + 1) × width_ns), the last
// one ending at `to`. A temporary allocation counts at its free, and only if
// the range holds its allocation too, as window_figures' `temporary` does.
// rss_bytes is left unset: the samples are the dump's, not the table's.
struct WindowTimeline {
  std::uint64_t width_ns = 0;
  std::vector<TimelineBucket> buckets;
};
// At most `max_buckets` buckets (at least 1), as narrow as that allows.
WindowTimeline window_timeline(const AllocationTable& t, const TimeWindow& window, std::uint64_t max_buckets);

}  // namespace memrec::analyzer
