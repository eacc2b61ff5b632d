// Replays a dump's heap and anonymous-memory events in merged order, pairing
// frees with allocations by address, to get the live heap at the end and its
// peak. A free of an unknown address (allocated before recording started or
// while paused) is counted, never an error.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "load/heap_event.h"
#include "model/address_map.h"
#include "model/mmap_ranges.h"

namespace memrec::analyzer {

struct HeapReplay {
  AddressMap live;  // heap blocks live at the end, by address
  std::uint64_t live_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t peak_time_ns = 0;  // first time the peak was reached; 0 if the heap never grew
  std::uint64_t unmatched_frees = 0;
  // An allocation at an address that was still live: its free was not
  // recorded (a hook passed it through), so the old block is dropped.
  std::uint64_t replaced_blocks = 0;
  MmapRanges mmap;
};

HeapReplay replay_heap(std::span<const std::vector<HeapEvent>> streams);
// One event, in merged order: what replay_heap does with each.
void replay_event(HeapReplay& h, const HeapEvent& e);

}  // namespace memrec::analyzer
