// Widening instead of a fixed width: the recording's end is unknown until the
// last event, and a second pass over the dump would double the load time.
#include "model/heap_timeline.h"

#include <algorithm>

namespace memrec::analyzer {

HeapTimeline::HeapTimeline(std::uint64_t start_ns, std::uint64_t first_bucket_ns)
    : start_ns_(start_ns), bucket_ns_(std::max<std::uint64_t>(first_bucket_ns, 1)) {
  buckets_.reserve(2 * kMaxBuckets);
}

void HeapTimeline::halve() {
  std::vector<TimelineBucket> merged((buckets_.size() + 1) / 2);
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const TimelineBucket& b = buckets_[i];
    TimelineBucket& m = merged[i / 2];
    if (b.has_events) {
      m.heap_bytes = b.heap_bytes;  // the later bucket's last value wins
      m.live_count = b.live_count;
      m.has_events = true;
    }
    if (b.changed) {
      m.heap_max_bytes = m.changed ? std::max(m.heap_max_bytes, b.heap_max_bytes) : b.heap_max_bytes;
      m.changed = true;
    }
    m.alloc_count += b.alloc_count;
    m.free_count += b.free_count;
    m.temporary_count += b.temporary_count;
    if (b.rss_bytes) m.rss_bytes = std::max(m.rss_bytes.value_or(0), *b.rss_bytes);
  }
  buckets_ = std::move(merged);
  bucket_ns_ *= 2;
}

std::size_t HeapTimeline::index_of(std::uint64_t time_ns) {
  const std::uint64_t offset = time_ns > start_ns_ ? time_ns - start_ns_ : 0;
  while (offset / bucket_ns_ >= 2 * kMaxBuckets) halve();
  const auto i = static_cast<std::size_t>(offset / bucket_ns_);
  if (i >= buckets_.size()) buckets_.resize(i + 1);
  return i;
}

void HeapTimeline::add(std::uint64_t time_ns, TimelineEvent event, std::uint64_t heap_bytes, std::uint64_t live_count,
                       bool temporary) {
  const bool changed = event != TimelineEvent::kUnmatchedFree;
  const bool freed = event == TimelineEvent::kFree;
  add(Run{time_ns, heap_bytes, live_count, changed ? heap_bytes : 0, event == TimelineEvent::kAllocation ? 1u : 0u,
          freed ? 1u : 0u, freed && temporary ? 1u : 0u, changed});
}

void HeapTimeline::add(const Run& run) {
  TimelineBucket& b = buckets_[index_of(run.last_ns)];
  b.heap_bytes = run.heap_bytes;
  b.live_count = run.live_count;
  b.has_events = true;
  if (run.changed) {
    b.heap_max_bytes = b.changed ? std::max(b.heap_max_bytes, run.heap_max_bytes) : run.heap_max_bytes;
    b.changed = true;
  }
  b.alloc_count += run.alloc_count;
  b.free_count += run.free_count;
  b.temporary_count += run.temporary_count;
}

std::uint64_t HeapTimeline::bucket_end(std::uint64_t time_ns) {
  return start_ns_ + (index_of(time_ns) + 1) * bucket_ns_;
}

void HeapTimeline::extend_to(std::uint64_t time_ns) { index_of(time_ns); }

void HeapTimeline::add_rss(std::uint64_t time_ns, std::uint64_t rss_bytes) {
  TimelineBucket& b = buckets_[index_of(time_ns)];
  b.rss_bytes = std::max(b.rss_bytes.value_or(0), rss_bytes);
}

void HeapTimeline::add_rss(std::span<const reader::RssRecord> samples) {
  for (const reader::RssRecord& r : samples) add_rss(r.time_ns, r.rss_bytes);
}

std::vector<TimelineBucket> HeapTimeline::buckets() const {
  std::vector<TimelineBucket> out = buckets_;
  const TimelineBucket* last = nullptr;
  for (TimelineBucket& b : out) {
    if (!b.has_events && last != nullptr) {
      b.heap_bytes = last->heap_bytes;
      b.live_count = last->live_count;
    }
    if (!b.changed) b.heap_max_bytes = b.heap_bytes;
    if (b.has_events) last = &b;
  }
  return out;
}

}  // namespace memrec::analyzer
