#include "model/site_growth.h"

#include <algorithm>
#include <cmath>

#include "model/row_reader.h"

namespace memrec::analyzer {

GrowthGrid GrowthGrid::over(std::uint64_t from_ns, std::uint64_t to_ns, std::size_t buckets) {
  GrowthGrid g;
  g.from_ns = from_ns;
  g.to_ns = std::max(from_ns, to_ns);
  const std::uint64_t span = g.to_ns - g.from_ns + 1;
  const std::uint64_t n = std::clamp<std::uint64_t>(buckets, 1, span);
  g.bucket_ns = (span + n - 1) / n;
  g.buckets = static_cast<std::size_t>((span + g.bucket_ns - 1) / g.bucket_ns);
  return g;
}

std::uint64_t GrowthGrid::width(std::size_t k) const {
  const std::uint64_t end = std::min(to_ns + 1, start(k) + bucket_ns);
  return end - start(k);
}

GrowthSeries site_growth_series(const AllocationTable& table, std::uint32_t site, const GrowthGrid& grid) {
  const std::size_t n = grid.buckets;
  GrowthSeries s;
  s.bytes.assign(n, 0);
  s.count.assign(n, 0);
  // Blocks live through whole buckets go in as differences, summed once at
  // the end: a row costs O(1) however long it lived.
  std::vector<std::int64_t> full_bytes(n + 1, 0);
  std::vector<std::int64_t> full_count(n + 1, 0);
  const std::uint64_t end = grid.to_ns + 1;
  const auto [first, last] = table.site_rows(site);
  RowReader reader(table, {kRowTime, kRowSize});
  for (const std::uint32_t* r = first; r != last; ++r) {
    reader.seek(*r);
    const std::uint64_t a = reader[kRowTime];
    const std::uint64_t f = reader.free_ns();
    const std::uint64_t size = reader[kRowSize];
    if (a <= grid.from_ns && f > grid.from_ns) s.bytes_at_from += size;
    if (a <= grid.to_ns && f > grid.to_ns) s.bytes_at_to += size;
    const std::uint64_t lo = std::max(a, grid.from_ns);
    const std::uint64_t hi = std::min(f, end);
    if (lo >= hi) continue;
    const std::size_t b1 = static_cast<std::size_t>((lo - grid.from_ns) / grid.bucket_ns);
    const std::size_t b2 = static_cast<std::size_t>((hi - 1 - grid.from_ns) / grid.bucket_ns);
    const auto bytes = static_cast<double>(size);
    if (b1 == b2) {
      s.bytes[b1] += bytes * static_cast<double>(hi - lo);
      s.count[b1] += static_cast<double>(hi - lo);
      continue;
    }
    const std::uint64_t head = grid.start(b1 + 1) - lo;
    const std::uint64_t tail = hi - grid.start(b2);
    s.bytes[b1] += bytes * static_cast<double>(head);
    s.count[b1] += static_cast<double>(head);
    s.bytes[b2] += bytes * static_cast<double>(tail);
    s.count[b2] += static_cast<double>(tail);
    full_bytes[b1 + 1] += static_cast<std::int64_t>(size);
    full_bytes[b2] -= static_cast<std::int64_t>(size);
    ++full_count[b1 + 1];
    --full_count[b2];
  }
  std::int64_t live_bytes = 0;
  std::int64_t live_count = 0;
  for (std::size_t k = 0; k < n; ++k) {
    live_bytes += full_bytes[k];
    live_count += full_count[k];
    const auto w = static_cast<double>(grid.width(k));
    s.bytes[k] = (s.bytes[k] + static_cast<double>(live_bytes) * w) / w;
    s.count[k] = (s.count[k] + static_cast<double>(live_count) * w) / w;
  }
  return s;
}

GrowthFit fit_growth(const GrowthSeries& series, const GrowthGrid& grid) {
  GrowthFit fit;
  fit.net_bytes = static_cast<std::int64_t>(series.bytes_at_to) - static_cast<std::int64_t>(series.bytes_at_from);
  const std::vector<double>& y = series.bytes;
  const std::size_t n = y.size();
  if (n < 2) return fit;
  constexpr double kNsPerMinute = 60e9;
  double sw = 0, sx = 0, sy = 0;
  std::vector<double> x(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto w = static_cast<double>(grid.width(k));
    x[k] = (static_cast<double>(grid.start(k) - grid.from_ns) + w / 2) / kNsPerMinute;
    sw += w;
    sx += w * x[k];
    sy += w * y[k];
  }
  const double mx = sx / sw;
  const double my = sy / sw;
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const auto w = static_cast<double>(grid.width(k));
    sxx += w * (x[k] - mx) * (x[k] - mx);
    sxy += w * (x[k] - mx) * (y[k] - my);
    syy += w * (y[k] - my) * (y[k] - my);
  }
  // A flat series (to rounding) has no growth to explain.
  const double tiny = 1e-12 * std::max(1.0, my * my) * sw;
  if (sxx <= 0 || syy <= tiny) return fit;
  fit.slope_bytes_per_minute = sxy / sxx;
  fit.r2 = std::clamp(sxy * sxy / (sxx * syy), 0.0, 1.0);
  double rose = 0, after_first = 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto w = static_cast<double>(grid.width(k));
    after_first += w;
    if (y[k] - y[k - 1] > 1e-9 * std::max(1.0, std::abs(y[k - 1]))) rose += w;
  }
  fit.grew_share = after_first > 0 ? rose / after_first : 0;
  fit.score = std::max(fit.slope_bytes_per_minute, 0.0) * fit.r2 * fit.grew_share;
  return fit;
}

GrowthSeries summed_growth_series(const AllocationTable& table, std::span<const std::uint32_t> sites,
                                  const GrowthGrid& grid) {
  GrowthSeries sum;
  for (const std::uint32_t s : sites) {
    const GrowthSeries one = site_growth_series(table, s, grid);
    if (sum.bytes.empty()) {
      sum = one;
      continue;
    }
    for (std::size_t k = 0; k < one.bytes.size(); ++k) {
      sum.bytes[k] += one.bytes[k];
      sum.count[k] += one.count[k];
    }
    sum.bytes_at_from += one.bytes_at_from;
    sum.bytes_at_to += one.bytes_at_to;
  }
  return sum;
}

std::vector<GrowthFit> fit_every_site(const AllocationTable& table, const GrowthGrid& grid) {
  std::vector<GrowthFit> fits(table.sites());
  for (std::uint32_t site = 0; site < fits.size(); ++site) {
    fits[site] = fit_growth(site_growth_series(table, site, grid), grid);
  }
  return fits;
}

}  // namespace memrec::analyzer
