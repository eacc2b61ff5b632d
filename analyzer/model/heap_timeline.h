// A downsampled series of the heap over time, filled while a dump is
// replayed: at most 2 × kMaxBuckets buckets whatever the recording's length,
// so massif's snapshots (export/massif) need no event kept. (`memrec view`
// computes exact series for any range from model/allocation_table instead.) Called by
// reports/heap_report (through a tee after StackReplay); never allocates per event.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "memrec/reader/records.h"

namespace memrec::analyzer {

struct TimelineBucket {
  std::uint64_t heap_bytes = 0;            // at the bucket's last event
  std::uint64_t heap_max_bytes = 0;        // the highest within it
  std::uint64_t live_count = 0;            // live blocks at its last event
  std::optional<std::uint64_t> rss_bytes;  // the highest RSS sample within it
  bool has_events = false;
};

class HeapTimeline {
 public:
  static constexpr std::size_t kMaxBuckets = 256;

  // `start_ns`: the dump's start (CLOCK_MONOTONIC); the first bucket's width.
  explicit HeapTimeline(std::uint64_t start_ns, std::uint64_t first_bucket_ns = 1000);

  // The heap after an event at `time_ns` (times never go back: the merged order).
  void add(std::uint64_t time_ns, std::uint64_t heap_bytes, std::uint64_t live_count);
  void add_rss(std::uint64_t time_ns, std::uint64_t rss_bytes);
  void add_rss(std::span<const reader::RssRecord> samples);

  std::uint64_t start_ns() const { return start_ns_; }
  std::uint64_t bucket_ns() const { return bucket_ns_; }
  // Bucket i covers [start + i × bucket_ns, start + (i + 1) × bucket_ns).
  // A bucket without events carries the heap of the one before it.
  std::vector<TimelineBucket> buckets() const;

 private:
  std::size_t index_of(std::uint64_t time_ns);  // widens the buckets when needed
  void halve();                                 // merges neighbours, doubles bucket_ns_

  std::uint64_t start_ns_;
  std::uint64_t bucket_ns_;
  std::vector<TimelineBucket> buckets_;
};

}  // namespace memrec::analyzer
