// How a call site's live bytes grew over a window: the question a service
// that never exits asks ("what keeps growing while it runs"), where leaked at
// exit says nothing (it may free everything at shutdown). Computed from the
// allocation table, so `memrec report --growth`, `memrec diff` and `memrec
// view` give the same figures (docs/analyzer.md, "Growth").
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/allocation_table.h"

namespace memrec::analyzer {

// The buckets a growth fit is made over (report --growth, the view's Growth sort).
inline constexpr std::size_t kGrowthBuckets = 64;

// A window [from_ns, to_ns] (absolute, inclusive) cut into equal buckets, the
// last one shorter if the span does not divide; at most as many buckets as
// nanoseconds.
struct GrowthGrid {
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = 0;
  std::uint64_t bucket_ns = 1;
  std::size_t buckets = 0;

  static GrowthGrid over(std::uint64_t from_ns, std::uint64_t to_ns, std::size_t buckets);
  std::uint64_t start(std::size_t k) const { return from_ns + k * bucket_ns; }
  std::uint64_t width(std::size_t k) const;
};

// A site's live bytes and live blocks averaged over each bucket (the integral
// over the bucket divided by its width), and exactly at the window's ends
// (allocated at or before the instant, freed after it).
struct GrowthSeries {
  std::vector<double> bytes;
  std::vector<double> count;
  std::uint64_t bytes_at_from = 0;
  std::uint64_t bytes_at_to = 0;
};

// The fit of one series: a least-squares line through the buckets' averages
// (each weighted by its width, at its middle), its R² (0 for a flat series:
// nothing to explain), the net change between the window's ends, and the
// share of the window (in bucket widths, after the first) in which the
// average rose. score = max(slope, 0) × R² × grew_share: steady growth keeps
// its slope; a single jump (one bucket of many) or a sawtooth (R² near 0)
// scores near zero.
struct GrowthFit {
  double slope_bytes_per_minute = 0;
  double r2 = 0;
  std::int64_t net_bytes = 0;
  double grew_share = 0;
  double score = 0;
};

GrowthSeries site_growth_series(const AllocationTable& table, std::uint32_t site, const GrowthGrid& grid);
// The sum of several sites' series (sites merged for display, or matched by a diff).
GrowthSeries summed_growth_series(const AllocationTable& table, std::span<const std::uint32_t> sites,
                                  const GrowthGrid& grid);
GrowthFit fit_growth(const GrowthSeries& series, const GrowthGrid& grid);

// Every site's fit over one range, and the sites ranked by score. Times are
// relative to the dump's start (reports' RelativeWindow): the fit's span, and
// the warm-up before it that the fit left out.
struct GrowthRanking {
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = 0;
  std::uint64_t warmup_ns = 0;
  std::size_t buckets = 0;
  std::vector<GrowthFit> fits;       // by site index
  std::vector<std::uint32_t> order;  // site indices by score, highest first; scores above 0 only
};

// The fit of every site of the table (set_sites done), by site index.
std::vector<GrowthFit> fit_every_site(const AllocationTable& table, const GrowthGrid& grid);

}  // namespace memrec::analyzer
