// What a span of the run left behind: the blocks allocated in [from, to] and
// still live at `at` (allocated at or before it, freed after it), per call
// site. "What did the requests of the load test keep after it ended."
// From the allocation table (report --retained; the view's filter).
#pragma once

#include <cstdint>
#include <vector>

#include "model/allocation_table.h"

namespace memrec::analyzer {

struct Retention {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::vector<std::uint64_t> site_bytes;  // by site index (set_sites done)
  std::vector<std::uint64_t> site_count;
};

// report --retained A..B --at C: the span and instant relative to the dump's
// start, the figures, and the sites by retained bytes (non-zero only).
struct RetentionReport {
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = 0;
  std::uint64_t at_ns = 0;
  Retention figures;
  std::vector<std::uint32_t> order;
};

// Times absolute (the dump's monotonic ns).
Retention retained(const AllocationTable& table, std::uint64_t from_ns, std::uint64_t to_ns, std::uint64_t at_ns);

}  // namespace memrec::analyzer
