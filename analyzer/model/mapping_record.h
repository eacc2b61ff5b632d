// The anonymous mappings of one dump for `memrec view`'s Maps view, filled
// in merged order by model/stack_replay as the report's pass steps (each
// mmap, munmap and each half of an mremap). Memory grows with the live
// mappings and the number of mapping stacks, never with the recording's
// length: the unmapped ones survive only in their stack's figures, and the
// live bytes over time in a bounded series (model/heap_timeline.h).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "load/heap_event.h"
#include "model/heap_timeline.h"
#include "model/mmap_ranges.h"
#include "model/stack_replay.h"

namespace memrec::analyzer {

// What the mappings made with one stack did over the run. An mremap's new
// range counts for the mremap's stack; what it moved away counts as unmapped
// for the stack that had mapped it.
struct MappingStackFigures {
  std::uint64_t mmaps = 0;           // mmap calls
  std::uint64_t mremaps = 0;         // mremaps that left a range with this stack
  std::uint64_t mapped_bytes = 0;    // the sizes of both, summed
  std::uint64_t unmapped_bytes = 0;  // of those, released since (munmap, mremap, or a mapping over them)
  std::uint64_t live_bytes = 0;      // mapped now
  std::uint64_t peak_bytes = 0;      // the highest live_bytes
  std::uint64_t first_ns = 0;        // its first mapping (absolute)
  std::uint64_t last_ns = 0;         // the last event that changed its live bytes
};

struct MappingTotals {
  std::uint64_t mmaps = 0;
  std::uint64_t mremaps = 0;
  std::uint64_t munmaps = 0;         // munmap calls (an mremap's release is not one)
  std::uint64_t missed_munmaps = 0;  // of those, ones that overlapped no known anonymous mapping (files)
  std::uint64_t mapped_bytes = 0;    // by mmaps and mremaps
  std::uint64_t unmapped_bytes = 0;  // released by munmaps, mremaps and mappings over them
  std::uint64_t peak_bytes = 0;      // the highest live bytes
  std::uint64_t peak_time_ns = 0;    // first reached then; 0 if nothing was ever mapped
};

class MappingRecord {
 public:
  // `start_ns`: the dump's start, where the series begins.
  explicit MappingRecord(std::uint64_t start_ns) : series_(start_ns) {}

  // One kMmap or kMunmap event, in merged order; other kinds are ignored.
  void add(const HeapEvent& e);
  // Makes the series reach the recording's end.
  void extend_to(std::uint64_t time_ns) { series_.extend_to(time_ns); }

  const MmapRanges& live() const { return live_; }
  const MappingTotals& totals() const { return totals_; }
  // Stack ids past any a dump could define are kept under stack 0 (no stack).
  const std::unordered_map<std::uint32_t, MappingStackFigures>& stacks() const { return stacks_; }
  // The mapped bytes over time: a bucket's heap_bytes is the live mapped bytes
  // after its last event, heap_max_bytes the highest within it, live_count the
  // live mappings, alloc_count the mappings made and free_count the releases
  // that took bytes from a mapping.
  const HeapTimeline& series() const { return series_; }
  // The stacks as columns, for the call sites' symbolizer (reports/call_sites.h):
  // allocations = mmaps + mremaps, allocated_bytes = mapped_bytes, leaked = live, peak.
  StackColumns stack_columns() const;

 private:
  MappingStackFigures& stack(StackId id, std::uint64_t time_ns);
  void released(std::uint64_t time_ns);  // applies cuts_ to their stacks

  MmapRanges live_;
  MappingTotals totals_;
  std::unordered_map<std::uint32_t, MappingStackFigures> stacks_;
  HeapTimeline series_;
  std::vector<MmapRanges::Cut> cuts_;  // what the current event took, reused
};

}  // namespace memrec::analyzer
