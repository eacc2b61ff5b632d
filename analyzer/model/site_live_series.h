// A call site's live bytes and live blocks at instants across a window: what
// the view's site chart draws (server/view_site_series.cpp). Exact at each
// instant, not averaged, so the series' last point is the site's live bytes
// at the window's end as `memrec report --retained 0..T --at T` counts them.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "model/allocation_table.h"
#include "model/site_growth.h"

namespace memrec::analyzer {

// Point 0 is the window's first ns (grid.from_ns), point k + 1 the last ns of
// bucket k, so the last point is grid.to_ns. A block is live at an instant
// when it was allocated at or before it and freed after it.
struct LiveSeries {
  std::vector<std::uint64_t> time_ns;  // absolute
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> count;
};

// The instants of the series over `grid` (grid.buckets + 1 of them).
std::vector<std::uint64_t> live_series_instants(const GrowthGrid& grid);

// The blocks of every site in `sites` summed (a grouped site's members).
LiveSeries site_live_series(const AllocationTable& table, std::span<const std::uint32_t> sites, const GrowthGrid& grid);

}  // namespace memrec::analyzer
