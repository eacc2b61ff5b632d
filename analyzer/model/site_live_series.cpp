// Each block adds its size from the first instant at or after its allocation
// to the last before its free: two entries in a difference array, summed once,
// so a site costs O(its rows + points) however long its blocks lived.
#include "model/site_live_series.h"

#include <algorithm>

#include "common/parallel_for.h"
#include "model/row_reader.h"

namespace memrec::analyzer {
namespace {

constexpr std::size_t kParallelSiteRows = 1u << 16;

// The first point whose instant is at or after `t` (points.size() if none).
std::size_t first_point_at_or_after(const GrowthGrid& grid, std::uint64_t t) {
  if (t <= grid.from_ns) return 0;
  if (t > grid.to_ns) return grid.buckets + 1;
  // Bucket k ends at from + (k + 1) * bucket_ns - 1 (the last one at to_ns).
  return static_cast<std::size_t>((t - grid.from_ns) / grid.bucket_ns) + 1;
}

}  // namespace

std::vector<std::uint64_t> live_series_instants(const GrowthGrid& grid) {
  std::vector<std::uint64_t> out;
  out.reserve(grid.buckets + 1);
  out.push_back(grid.from_ns);
  for (std::size_t k = 0; k < grid.buckets; ++k) out.push_back(grid.start(k) + grid.width(k) - 1);
  return out;
}

LiveSeries site_live_series(const AllocationTable& table, std::span<const std::uint32_t> sites,
                            const GrowthGrid& grid) {
  const std::size_t points = grid.buckets + 1;
  // A site's rows spread over every block: each half of its list is read
  // on a thread of its own (the reading is the blocks' decoding), into
  // difference arrays of its own, summed after.
  std::vector<std::int64_t> diffs[2][2];
  for (auto& part : diffs) {
    for (auto& d : part) d.assign(points + 1, 0);
  }
  for (const std::uint32_t site : sites) {
    const auto [first, last] = table.site_rows(site);
    const std::size_t n = static_cast<std::size_t>(last - first);
    parallel_parts(std::size_t{0}, n, n < kParallelSiteRows ? 1 : 2, [&](std::size_t b, std::size_t e, std::size_t p) {
      std::vector<std::int64_t>& bytes = diffs[p][0];
      std::vector<std::int64_t>& count = diffs[p][1];
      RowReader reader(table, {kRowTime, kRowSize});
      // A site's rows are in allocation order: those after the window end it.
      for (const std::uint32_t* r = first + b; r != first + e; ++r) {
        reader.seek(*r);
        if (reader[kRowTime] > grid.to_ns) break;
        const std::size_t born = first_point_at_or_after(grid, reader[kRowTime]);
        const std::size_t gone = first_point_at_or_after(grid, reader.free_ns());
        if (born >= gone) continue;
        const auto size = static_cast<std::int64_t>(reader[kRowSize]);
        bytes[born] += size;
        bytes[gone] -= size;
        ++count[born];
        --count[gone];
      }
    });
  }
  const std::vector<std::int64_t>& bytes0 = diffs[0][0];
  const std::vector<std::int64_t>& count0 = diffs[0][1];
  const std::vector<std::int64_t>& bytes1 = diffs[1][0];
  const std::vector<std::int64_t>& count1 = diffs[1][1];
  LiveSeries out;
  out.time_ns = live_series_instants(grid);
  out.bytes.resize(points);
  out.count.resize(points);
  std::int64_t b = 0;
  std::int64_t c = 0;
  for (std::size_t p = 0; p < points; ++p) {
    b += bytes0[p] + bytes1[p];
    c += count0[p] + count1[p];
    out.bytes[p] = static_cast<std::uint64_t>(std::max<std::int64_t>(b, 0));
    out.count[p] = static_cast<std::uint64_t>(std::max<std::int64_t>(c, 0));
  }
  return out;
}

}  // namespace memrec::analyzer
