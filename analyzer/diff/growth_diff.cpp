// A site of the diff may be several sites of one side (they differed only in
// module paths or addresses): their live bytes are summed before the fit,
// since R² and the share grown do not add up.
#include "diff/growth_diff.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "reports/growth_ranking.h"

namespace memrec::analyzer {
namespace {

// The fit window rank_growth chose, as a grid of absolute times.
GrowthGrid grid_of(const HeapReport& r, const GrowthRanking& g) {
  const std::uint64_t start = r.dump.header.start_mono_ns;
  return GrowthGrid::over(start + g.from_ns, start + g.to_ns, kGrowthBuckets);
}

GrowthFit fit_of(const std::vector<std::uint32_t>& sites, const GrowthRanking& g, const AllocationTable& table,
                 const GrowthGrid& grid) {
  if (sites.empty()) return {};
  if (sites.size() == 1) return g.fits[sites.front()];
  const GrowthSeries sum = summed_growth_series(table, sites, grid);
  return fit_growth(sum, grid);
}

}  // namespace

GrowthDiff diff_growth(const HeapReport& base, const AllocationTable& base_table, const HeapReport& next,
                       const AllocationTable& next_table, std::optional<std::uint64_t> warmup_ns) {
  GrowthDiff d;
  d.matched = diff_sides(diff_side(base), diff_side(next), true);
  d.base = rank_growth(base, base_table, warmup_ns);
  d.next = rank_growth(next, next_table, warmup_ns);
  const GrowthGrid base_grid = grid_of(base, d.base);
  const GrowthGrid next_grid = grid_of(next, d.next);
  for (std::uint32_t i = 0; i < d.matched.sites.size(); ++i) {
    const SiteDiff& s = d.matched.sites[i];
    SiteGrowthDiff g{i, fit_of(s.base_sites, d.base, base_table, base_grid),
                     fit_of(s.next_sites, d.next, next_table, next_grid)};
    // Under half a byte a minute is no growth, as in report --growth.
    if (g.base.score >= 0.5 || g.next.score >= 0.5) d.sites.push_back(g);
  }
  std::stable_sort(d.sites.begin(), d.sites.end(), [](const SiteGrowthDiff& a, const SiteGrowthDiff& b) {
    return std::abs(a.next.score - a.base.score) > std::abs(b.next.score - b.base.score);
  });
  for (GrowthRanking* g : {&d.base, &d.next}) {
    g->fits.clear();
    g->order.clear();
  }
  return d;
}

}  // namespace memrec::analyzer
