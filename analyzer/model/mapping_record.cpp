// One function per kind of event; MmapRanges does the interval arithmetic
// and says which stacks lost bytes, so the per-stack figures stay exact when
// a munmap cuts a mapping in two or spans several.
#include "model/mapping_record.h"

#include <algorithm>

namespace memrec::analyzer {
namespace {

// As model/stack_replay.cpp: a stack id this large is hostile input.
constexpr std::uint32_t kMaxStackId = 1u << 26;

// MmapRanges saturates a range's end at 2^64 - 1; the bytes it maps.
std::uint64_t mapped_size(std::uint64_t addr, std::uint64_t size) {
  return std::min<std::uint64_t>(size, ~0ull - addr);
}

}  // namespace

MappingStackFigures& MappingRecord::stack(StackId id, std::uint64_t time_ns) {
  const std::uint32_t key = id.value < kMaxStackId ? id.value : 0;
  const auto [it, added] = stacks_.try_emplace(key);
  if (added) it->second.first_ns = time_ns;
  return it->second;
}

void MappingRecord::released(std::uint64_t time_ns) {
  for (const MmapRanges::Cut& cut : cuts_) {
    MappingStackFigures& s = stack(cut.stack, time_ns);
    s.live_bytes -= cut.bytes;
    s.unmapped_bytes += cut.bytes;
    s.last_ns = time_ns;
    totals_.unmapped_bytes += cut.bytes;
  }
}

void MappingRecord::add(const HeapEvent& e) {
  if (e.op != HeapOp::kMmap && e.op != HeapOp::kMunmap) return;
  cuts_.clear();
  TimelineEvent change = TimelineEvent::kUnmatchedFree;
  if (e.op == HeapOp::kMmap) {
    // Both halves of an mremap carry `realloc` (load/frame_collector.cpp).
    ++(e.realloc ? totals_.mremaps : totals_.mmaps);
    const StackId id{e.stack.value < kMaxStackId ? e.stack.value : 0};
    live_.map(e.addr, e.size, id, e.time_ns, &cuts_);
    released(e.time_ns);
    const std::uint64_t bytes = mapped_size(e.addr, e.size);
    MappingStackFigures& s = stack(id, e.time_ns);
    ++(e.realloc ? s.mremaps : s.mmaps);
    s.mapped_bytes += bytes;
    s.live_bytes += bytes;
    s.peak_bytes = std::max(s.peak_bytes, s.live_bytes);
    s.last_ns = e.time_ns;
    totals_.mapped_bytes += bytes;
    if (bytes != 0) change = TimelineEvent::kAllocation;
  } else {
    live_.unmap(e.addr, e.size, &cuts_);
    released(e.time_ns);
    if (!e.realloc) {
      ++totals_.munmaps;
      if (cuts_.empty()) ++totals_.missed_munmaps;
    }
    if (!cuts_.empty()) change = TimelineEvent::kFree;
  }
  if (live_.live_bytes() > totals_.peak_bytes) {
    totals_.peak_bytes = live_.live_bytes();
    totals_.peak_time_ns = e.time_ns;
  }
  series_.add(e.time_ns, change, live_.live_bytes(), live_.live_count());
}

StackColumns MappingRecord::stack_columns() const {
  std::uint32_t highest = 0;
  for (const auto& [id, s] : stacks_) highest = std::max(highest, id);
  StackColumns c;
  c.resize(stacks_.empty() ? 0 : std::size_t{highest} + 1);
  for (const auto& [id, s] : stacks_) {
    c.allocations[id] = s.mmaps + s.mremaps;
    c.allocated_bytes[id] = s.mapped_bytes;
    c.leaked_bytes[id] = s.live_bytes;
    c.peak_bytes[id] = s.peak_bytes;
  }
  return c;
}

}  // namespace memrec::analyzer
