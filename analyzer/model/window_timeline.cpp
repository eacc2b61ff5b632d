// Each bucket is two cursors and the saved maxima between them
// (model/heap_cursor.h): a range's timeline costs its buckets, not its events.
#include "model/window_timeline.h"

#include <algorithm>

#include "model/heap_cursor.h"
#include "model/window_figures.h"

namespace memrec::analyzer {

WindowTimeline window_timeline(const AllocationTable& t, const TimeWindow& w, std::uint64_t max_buckets) {
  const auto span = static_cast<unsigned __int128>(w.to_ns - w.from_ns) + 1;
  const auto width = static_cast<std::uint64_t>((span + max_buckets - 1) / max_buckets);
  const auto n = static_cast<std::size_t>((span + width - 1) / width);
  WindowTimeline out{width, std::vector<TimelineBucket>(n)};
  std::vector<TimelineBucket>& buckets = out.buckets;
  const auto& replaced = t.replaced_ns();
  EventCursor begin = cursor_before(t, w.from_ns);
  std::uint64_t temporary_before = temporary_frees(t, begin);
  for (std::size_t b = 0; b < n; ++b) {
    const std::uint64_t start = w.from_ns + b * width;
    const std::uint64_t last = b + 1 == n ? w.to_ns : start + width - 1;
    const EventCursor end = cursor_at(t, last);
    const HeapMax m = heap_max(t, begin.position, end.position, false);
    const auto replaced_in = std::upper_bound(replaced.begin(), replaced.end(), last) -
                             std::lower_bound(replaced.begin(), replaced.end(), start);
    TimelineBucket& x = buckets[b];
    x.heap_bytes = end.heap_bytes;
    x.heap_max_bytes = m.found ? m.bytes : end.heap_bytes;
    x.live_count = end.live_count;
    x.alloc_count = end.rows - begin.rows;
    x.free_count = end.frees - begin.frees - static_cast<std::uint64_t>(replaced_in);
    const std::uint64_t temporary_after = temporary_frees(t, end);
    x.temporary_count = temporary_after - temporary_before;
    temporary_before = temporary_after;
    begin = end;
  }
  for (const std::uint64_t free_ns : temporary_frees_from_before(t, w))
    --buckets[(free_ns - w.from_ns) / width].temporary_count;
  return out;
}

}  // namespace memrec::analyzer
