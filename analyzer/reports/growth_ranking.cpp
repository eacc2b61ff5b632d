#include "reports/growth_ranking.h"

#include <algorithm>
#include <string>

namespace memrec::analyzer {

Result<AllocationTable> allocation_table_of(const HeapReport& report, LoadOptions load) {
  load.file_bytes = report.dump.facts.file_bytes;
  AllocationTableBuilder builder;
  auto run = replay_into(report.dump.path, load, builder);
  if (!run) return run.error();
  if (builder.full()) {
    return Error{ErrorCode::kUsage, report.dump.path + " holds more than " +
                                        std::to_string(AllocationTableBuilder::kMaxRows) +
                                        " allocations, more than the allocation table can index: report it "
                                        "without --growth"};
  }
  // A range's report counts only its allocations; the events are the whole file's either way.
  const bool whole = report.window.from_ns == 0 && !report.window.to_ns;
  if (run->events != report.events || (whole && run->totals.allocations != report.totals.allocations)) {
    return Error{ErrorCode::kIo, report.dump.path + " changed while it was read (" + std::to_string(run->events) +
                                     " events the second time, " + std::to_string(report.events) + " the first)"};
  }
  AllocationTable table = builder.finish();
  table.set_sites(report.sites.site_of_stack, static_cast<std::uint32_t>(report.sites.sites.size()));
  return table;
}

GrowthRanking rank_growth(const HeapReport& report, const AllocationTable& table,
                          std::optional<std::uint64_t> warmup_ns) {
  GrowthRanking g;
  const std::uint64_t end =
      report.window.to_ns ? std::min(*report.window.to_ns, report.duration_ns) : report.duration_ns;
  const std::uint64_t begin = std::min(report.window.from_ns, end);
  g.warmup_ns = std::min(warmup_ns.value_or((end - begin) / 10), end - begin);
  g.from_ns = begin + g.warmup_ns;
  g.to_ns = end;
  const std::uint64_t start = report.dump.header.start_mono_ns;
  const GrowthGrid grid = GrowthGrid::over(start + g.from_ns, start + g.to_ns, kGrowthBuckets);
  g.buckets = grid.buckets;
  g.fits = fit_every_site(table, grid);
  for (std::uint32_t s = 0; s < g.fits.size(); ++s) {
    // Under half a byte a minute is no growth: the view's sort rounds scores to bytes.
    if (g.fits[s].score >= 0.5) g.order.push_back(s);
  }
  std::stable_sort(g.order.begin(), g.order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return g.fits[a].score > g.fits[b].score; });
  return g;
}

RetentionReport rank_retained(const HeapReport& report, const AllocationTable& table, std::uint64_t from_ns,
                              std::uint64_t to_ns, std::optional<std::uint64_t> at_ns) {
  RetentionReport r;
  r.from_ns = from_ns;
  r.to_ns = to_ns;
  r.at_ns = at_ns.value_or(to_ns);
  const std::uint64_t start = report.dump.header.start_mono_ns;
  r.figures = retained(table, start + r.from_ns, start + r.to_ns, start + r.at_ns);
  for (std::uint32_t s = 0; s < r.figures.site_bytes.size(); ++s) {
    if (r.figures.site_bytes[s] > 0) r.order.push_back(s);
  }
  std::stable_sort(r.order.begin(), r.order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return r.figures.site_bytes[a] > r.figures.site_bytes[b]; });
  return r;
}

}  // namespace memrec::analyzer
