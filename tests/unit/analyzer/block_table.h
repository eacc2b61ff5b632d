// A finished allocation table from a list of blocks, each with its
// allocation and free time, size and site: the model's per-site queries
// (site_growth_test, site_live_series_test) checked against a brute-force
// count over the same blocks.
#pragma once

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "table_feed.h"

namespace memrec::analyzer {

struct Block {
  std::uint64_t alloc_ns;
  std::uint64_t free_ns;  // kNeverFreed: never
  std::uint64_t size;
  std::uint32_t site;
};

// Every block at its own address, events in time order (allocations before
// frees at the same time), one site per stack id.
inline AllocationTable table_of(const std::vector<Block>& blocks, std::uint32_t sites) {
  struct Ev {
    std::uint64_t t;
    bool alloc;
    std::size_t block;
  };
  std::vector<Ev> events;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    events.push_back({blocks[i].alloc_ns, true, i});
    if (blocks[i].free_ns != kNeverFreed) events.push_back({blocks[i].free_ns, false, i});
  }
  std::stable_sort(events.begin(), events.end(), [](const Ev& a, const Ev& b) { return a.t < b.t; });
  AllocationTableBuilder builder;
  TableFeed feed(builder);
  for (const Ev& e : events) {
    const Block& b = blocks[e.block];
    const std::uint64_t addr = 0x10000 + 0x100 * e.block;
    feed(e.alloc ? HeapEvent{e.t, addr, b.size, StackId{b.site}, HeapOp::kAlloc, false}
                 : HeapEvent{e.t, addr, 0, {}, HeapOp::kFree, false},
         0);
  }
  AllocationTable table = builder.finish();
  std::unordered_map<std::uint32_t, std::uint32_t> site_of_stack;
  for (std::uint32_t s = 0; s < sites; ++s) site_of_stack[s] = s;
  table.set_sites(site_of_stack, sites);
  return table;
}

}  // namespace memrec::analyzer
