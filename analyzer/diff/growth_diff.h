// `memrec diff --growth`: how each call site's live bytes grew on each side
// (model/site_growth.h, the fit `memrec report --growth` makes), matched
// site by site as the rest of the diff is. Answers "does the cache still
// grow in the new build" or "which site grew faster under the second load".
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "diff/site_diff.h"
#include "model/site_growth.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

struct SiteGrowthDiff {
  std::uint32_t site = 0;  // into GrowthDiff::matched.sites
  GrowthFit base;
  GrowthFit next;
};

struct GrowthDiff {
  // Every site of both sides, unchanged ones included (diff_sides' `unchanged`).
  HeapDiff matched;
  // Each side's fit window and warm-up, relative to its dump's start; `fits`
  // and `order` are left empty (the fits are in `sites`).
  GrowthRanking base;
  GrowthRanking next;
  // The sites that grew on either side (a score of at least half a byte a
  // minute, as report --growth lists them), the largest change of score
  // either way first.
  std::vector<SiteGrowthDiff> sites;
};

// The tables are each report's (reports/growth_ranking.h allocation_table_of);
// the warm-up applies to both sides (default: a tenth of each side's range).
GrowthDiff diff_growth(const HeapReport& base, const AllocationTable& base_table, const HeapReport& next,
                       const AllocationTable& next_table, std::optional<std::uint64_t> warmup_ns);

}  // namespace memrec::analyzer
