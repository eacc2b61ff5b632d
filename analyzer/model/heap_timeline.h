// A downsampled series of the heap over time, filled while a dump is
// replayed: at most 2 × kMaxBuckets buckets whatever the recording's length,
// so massif's snapshots (export/massif) need no event kept. (`memrec view`
// computes exact series for any range from model/allocation_table, and serves
// this one for the whole run while a large dump's table is being built.) Filled
// by model/stack_replay as it steps; never allocates per event.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "memrec/reader/records.h"

namespace memrec::analyzer {

// What an event did to the heap.
enum class TimelineEvent {
  kAllocation,     // a realloc's new block too
  kFree,           // of a live block
  kUnmatchedFree,  // of no recorded block: the heap stays as it was
};

struct TimelineBucket {
  std::uint64_t heap_bytes = 0;            // at the bucket's last event
  std::uint64_t heap_max_bytes = 0;        // the highest after an allocation or free in it; else heap_bytes
  std::uint64_t live_count = 0;            // live blocks at its last event
  std::uint64_t alloc_count = 0;           // allocations in it
  std::uint64_t free_count = 0;            // frees of a live block in it
  std::uint64_t temporary_count = 0;       // of those, of a temporary allocation (model/stack_replay.h)
  std::optional<std::uint64_t> rss_bytes;  // the highest RSS sample within it
  bool has_events = false;
  bool changed = false;  // an allocation or a free of a live block in it: heap_max_bytes is set
};

class HeapTimeline {
 public:
  static constexpr std::size_t kMaxBuckets = 256;

  // `start_ns`: the dump's start (CLOCK_MONOTONIC); the first bucket's width.
  explicit HeapTimeline(std::uint64_t start_ns, std::uint64_t first_bucket_ns = 1000);

  // The heap after an event at `time_ns` (times never go back: the merged
  // order). The highest heap of a bucket counts only events that changed
  // it, as model/allocation_table's series do, which know no unmatched free.
  // `temporary`: a kFree of a block freed before its thread allocated again.
  void add(std::uint64_t time_ns, TimelineEvent event, std::uint64_t heap_bytes, std::uint64_t live_count,
           bool temporary = false);
  // Events of one bucket summed by the caller, as add() would have taken
  // them one by one: model/stack_replay sums them in registers, as an add()
  // per event made memrec view's first pass of a large dump 9 % slower.
  struct Run {
    std::uint64_t last_ns = 0;         // the last event's time
    std::uint64_t heap_bytes = 0;      // the heap after it
    std::uint64_t live_count = 0;      // live blocks after it
    std::uint64_t heap_max_bytes = 0;  // the highest after one that changed the heap
    std::uint64_t alloc_count = 0;
    std::uint64_t free_count = 0;
    std::uint64_t temporary_count = 0;
    bool changed = false;  // heap_max_bytes is set
  };
  void add(const Run& run);
  // The end (exclusive) of the bucket that holds `time_ns`, widening the
  // buckets first if they do not reach it: a Run sums events before it.
  std::uint64_t bucket_end(std::uint64_t time_ns);
  void add_rss(std::uint64_t time_ns, std::uint64_t rss_bytes);
  void add_rss(std::span<const reader::RssRecord> samples);
  // Makes the buckets reach the one holding `time_ns` (the recording's end),
  // widening them if needed; the new ones carry the heap of the last.
  void extend_to(std::uint64_t time_ns);

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
