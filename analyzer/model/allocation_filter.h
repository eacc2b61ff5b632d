// Which allocations a filter keeps: the one predicate behind memrec view's
// allocation table (server/view_allocations.cpp) and `memrec export`'s
// selection options (export/allocation_selection.h), so a filtered download,
// the CLI's file and the table's rows agree. Pure: it reads a finished table.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/allocation_table.h"

namespace memrec::analyzer {

// Every condition is on one allocation; absent or default ones keep all.
// Times are absolute CLOCK_MONOTONIC ns, like the table's.
struct AllocationFilter {
  std::uint64_t min_size = 0;  // both bounds included
  std::uint64_t max_size = ~0ull;
  // From allocation to free; a block never freed lives forever: it passes
  // any min_life_ns and fails any max_life_ns below ~0.
  std::uint64_t min_life_ns = 0;
  std::uint64_t max_life_ns = ~0ull;
  std::optional<std::uint32_t> thread;         // LoadedDump::threads index
  std::optional<std::uint64_t> alive_at_ns;    // allocated at or before it and not freed by then
  std::optional<std::uint64_t> live_after_ns;  // not freed by then: "leaked" at a range's end
  // By call site id (the table's set_sites); absent: every row, also those of no site.
  std::optional<std::vector<bool>> site_ok;

  // True when no condition is set: every allocation passes.
  bool keeps_all() const;
};

bool passes(const AllocationTable& t, const AllocationFilter& f, std::uint32_t row);

// One flag per row of `t`: the selection StackReplay counts alone.
std::vector<bool> select_rows(const AllocationTable& t, const AllocationFilter& f);

// Narrows `f` to the sites that `keep` (by site id) has too.
void keep_sites(AllocationFilter& f, const std::vector<bool>& keep);

}  // namespace memrec::analyzer
