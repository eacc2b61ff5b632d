// A site's live series (model/site_live_series.h): every point against a
// count of the blocks live at its instant, on random blocks and on the edges
// (allocated or freed at an instant exactly, before the window, never freed).
#include "model/site_live_series.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <vector>

#include "block_table.h"

namespace memrec::analyzer {
namespace {

// The bytes and blocks of `sites` live at `t`: allocated at or before it, freed after it.
std::pair<std::uint64_t, std::uint64_t> live_at(const std::vector<Block>& blocks,
                                                const std::vector<std::uint32_t>& sites, std::uint64_t t) {
  std::uint64_t bytes = 0, count = 0;
  for (const Block& b : blocks) {
    if (std::find(sites.begin(), sites.end(), b.site) == sites.end()) continue;
    if (b.alloc_ns <= t && t < b.free_ns) {
      bytes += b.size;
      ++count;
    }
  }
  return {bytes, count};
}

TEST_CASE("the instants are the window's first ns and each bucket's last, the window's last at the end") {
  const GrowthGrid g = GrowthGrid::over(100, 199, 8);  // buckets of 13 ns, the last of 9
  const std::vector<std::uint64_t> t = live_series_instants(g);
  REQUIRE(t.size() == 9);
  CHECK(t.front() == 100);
  CHECK(t[1] == 112);
  CHECK(t[7] == 190);
  CHECK(t.back() == 199);
}

TEST_CASE("every point is what is live at its instant, for one site and for sites summed") {
  std::mt19937_64 rng(11);
  std::vector<Block> blocks;
  for (int i = 0; i < 400; ++i) {
    const std::uint64_t a = rng() % 500;
    const std::uint64_t f = rng() % 4 == 0 ? kNeverFreed : a + rng() % 150;
    blocks.push_back({a, f, 1 + rng() % 5000, static_cast<std::uint32_t>(rng() % 3)});
  }
  const AllocationTable table = table_of(blocks, 3);
  for (const GrowthGrid& grid :
       {GrowthGrid::over(60, 379, 7), GrowthGrid::over(0, 499, 200), GrowthGrid::over(0, 9, 64)}) {
    for (const std::vector<std::uint32_t>& sites : {std::vector<std::uint32_t>{0}, {2}, {0, 1}}) {
      CAPTURE(grid.from_ns);
      CAPTURE(grid.buckets);
      CAPTURE(sites.size());
      const LiveSeries s = site_live_series(table, sites, grid);
      REQUIRE(s.time_ns == live_series_instants(grid));
      REQUIRE(s.bytes.size() == s.time_ns.size());
      for (std::size_t p = 0; p < s.time_ns.size(); ++p) {
        CAPTURE(s.time_ns[p]);
        const auto [bytes, count] = live_at(blocks, sites, s.time_ns[p]);
        CHECK(s.bytes[p] == bytes);
        CHECK(s.count[p] == count);
      }
    }
  }
}

TEST_CASE("a site of many blocks, read in two halves at once, gives every point as one pass would") {
  std::mt19937_64 rng(13);
  std::vector<Block> blocks;
  for (std::uint64_t i = 0; i < 150'000; ++i) {
    const std::uint64_t a = 10 * i;
    const std::uint64_t f = rng() % 8 == 0 ? kNeverFreed : a + 1 + rng() % 400'000;
    blocks.push_back({a, f, 1 + rng() % 5000, static_cast<std::uint32_t>(rng() % 2)});
  }
  const AllocationTable table = table_of(blocks, 2);
  for (const GrowthGrid& grid : {GrowthGrid::over(0, 1'500'000, 50), GrowthGrid::over(300'000, 900'000, 13)}) {
    for (const std::vector<std::uint32_t>& sites : {std::vector<std::uint32_t>{1}, {0, 1}}) {
      CAPTURE(grid.from_ns);
      CAPTURE(sites.size());
      const LiveSeries s = site_live_series(table, sites, grid);
      for (std::size_t p = 0; p < s.time_ns.size(); ++p) {
        CAPTURE(s.time_ns[p]);
        const auto [bytes, count] = live_at(blocks, sites, s.time_ns[p]);
        REQUIRE(s.bytes[p] == bytes);
        REQUIRE(s.count[p] == count);
      }
    }
  }
}

TEST_CASE("a block is live from its allocation's instant, not at its free's, and one never freed to the end") {
  // site 0: allocated before the window and freed exactly at instant 112;
  // allocated exactly at 125 and never freed; allocated after the window.
  const std::vector<Block> blocks = {{50, 112, 100, 0}, {125, kNeverFreed, 10, 0}, {300, kNeverFreed, 1, 0}};
  const AllocationTable table = table_of(blocks, 1);
  const LiveSeries s = site_live_series(table, std::vector<std::uint32_t>{0}, GrowthGrid::over(100, 199, 8));
  CHECK(s.bytes == std::vector<std::uint64_t>{100, 0, 10, 10, 10, 10, 10, 10, 10});
  CHECK(s.count == std::vector<std::uint64_t>{1, 0, 1, 1, 1, 1, 1, 1, 1});
}

}  // namespace
}  // namespace memrec::analyzer
