// A site's growth series and fit (model/site_growth.h): the series against a
// nanosecond-by-nanosecond count on random blocks, and the fit on shapes
// whose answer is known: a steady climb, a single jump, a flat line.
#include "model/site_growth.h"

#include <doctest/doctest.h>

#include <random>
#include <vector>

#include "block_table.h"

namespace memrec::analyzer {
namespace {

TEST_CASE("a grid covers its span exactly, its last bucket shorter") {
  const GrowthGrid g = GrowthGrid::over(1000, 1099, 64);
  CHECK(g.bucket_ns == 2);
  CHECK(g.buckets == 50);
  const GrowthGrid h = GrowthGrid::over(0, 99, 8);
  CHECK(h.bucket_ns == 13);
  CHECK(h.buckets == 8);
  std::uint64_t total = 0;
  for (std::size_t k = 0; k < h.buckets; ++k) total += h.width(k);
  CHECK(total == 100);
  CHECK(h.width(7) == 9);
  CHECK(GrowthGrid::over(5, 5, 64).buckets == 1);
}

TEST_CASE("the series is each bucket's average of live bytes and blocks, to the nanosecond") {
  std::mt19937_64 rng(7);
  std::vector<Block> blocks;
  for (int i = 0; i < 300; ++i) {
    const std::uint64_t a = rng() % 400;
    const std::uint64_t f = rng() % 4 == 0 ? kNeverFreed : a + rng() % 200;
    blocks.push_back({a, f, 1 + rng() % 5000, static_cast<std::uint32_t>(rng() % 3)});
  }
  const AllocationTable table = table_of(blocks, 3);
  const GrowthGrid grid = GrowthGrid::over(50, 349, 7);  // buckets of 43 ns, the last of 42
  for (std::uint32_t site = 0; site < 3; ++site) {
    const GrowthSeries s = site_growth_series(table, site, grid);
    REQUIRE(s.bytes.size() == grid.buckets);
    for (std::size_t k = 0; k < grid.buckets; ++k) {
      double bytes = 0, count = 0;
      for (std::uint64_t t = grid.start(k); t < grid.start(k) + grid.width(k); ++t) {
        for (const Block& b : blocks) {
          if (b.site == site && b.alloc_ns <= t && t < b.free_ns) {
            bytes += static_cast<double>(b.size);
            count += 1;
          }
        }
      }
      const auto w = static_cast<double>(grid.width(k));
      CHECK(s.bytes[k] == doctest::Approx(bytes / w).epsilon(1e-12));
      CHECK(s.count[k] == doctest::Approx(count / w).epsilon(1e-12));
    }
    std::uint64_t at_from = 0, at_to = 0;
    for (const Block& b : blocks) {
      if (b.site != site) continue;
      if (b.alloc_ns <= grid.from_ns && grid.from_ns < b.free_ns) at_from += b.size;
      if (b.alloc_ns <= grid.to_ns && grid.to_ns < b.free_ns) at_to += b.size;
    }
    CHECK(s.bytes_at_from == at_from);
    CHECK(s.bytes_at_to == at_to);
  }
}

TEST_CASE("a steady climb scores its slope; a jump a 64th of it at most; a flat site nothing") {
  std::vector<Block> blocks;
  // site 0: 1,000 bytes every 10 us, kept: 100 bytes a us, 6e9 a minute
  for (std::uint64_t t = 0; t < 10'000'000; t += 10'000) blocks.push_back({t, kNeverFreed, 1000, 0});
  // site 1: one block of 1 MB half-way
  blocks.push_back({5'000'000, kNeverFreed, 1'000'000, 1});
  // site 2: one block live throughout, one allocated and freed in every bucket
  blocks.push_back({0, kNeverFreed, 4096, 2});
  for (std::uint64_t t = 0; t < 10'000'000; t += 100'000) blocks.push_back({t + 10, t + 50'010, 64, 2});
  const AllocationTable table = table_of(blocks, 3);
  const GrowthGrid grid = GrowthGrid::over(0, 9'999'999, 64);
  const std::vector<GrowthFit> fits = fit_every_site(table, grid);
  REQUIRE(fits.size() == 3);
  CHECK(fits[0].slope_bytes_per_minute == doctest::Approx(6e9).epsilon(0.01));
  CHECK(fits[0].r2 > 0.999);
  CHECK(fits[0].grew_share == doctest::Approx(1.0));
  CHECK(fits[0].score == doctest::Approx(6e9).epsilon(0.01));
  CHECK(fits[0].net_bytes == 999'000);  // live at 9,999,999 ns: every block; at 0: the first
  CHECK(fits[1].grew_share == doctest::Approx(1.0 / 63).epsilon(0.05));
  CHECK(fits[1].score <= fits[1].slope_bytes_per_minute / 63 * 1.001);
  CHECK(fits[1].score < 0.02 * fits[0].score);
  CHECK(fits[1].net_bytes == 1'000'000);
  // site 2's buckets differ only by where the short blocks fall: no line explains them
  CHECK(fits[2].score < 1e-3 * fits[0].score);
}

TEST_CASE("a site with nothing live has no growth") {
  const AllocationTable table = table_of({{10, 20, 100, 0}}, 2);
  const GrowthFit fit =
      fit_growth(site_growth_series(table, 1, GrowthGrid::over(0, 99, 64)), GrowthGrid::over(0, 99, 64));
  CHECK(fit.slope_bytes_per_minute == 0);
  CHECK(fit.r2 == 0);
  CHECK(fit.score == 0);
  CHECK(fit.net_bytes == 0);
}

}  // namespace
}  // namespace memrec::analyzer
