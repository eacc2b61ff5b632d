#include "model/retention.h"

#include <algorithm>

#include "model/heap_cursor.h"

namespace memrec::analyzer {

// Rows are in allocation order, so their times never decrease: the span's
// rows are one run, found by the blocks' first times, and read a block at a time.
Retention retained(const AllocationTable& table, std::uint64_t from_ns, std::uint64_t to_ns, std::uint64_t at_ns) {
  Retention r;
  r.site_bytes.assign(table.sites(), 0);
  r.site_count.assign(table.sites(), 0);
  const std::uint32_t begin = from_ns == 0 ? 0 : rows_until(table, from_ns - 1);
  const std::uint32_t end = to_ns == UINT64_MAX ? static_cast<std::uint32_t>(table.rows()) : rows_until(table, to_ns);
  BlockReader reader(table.row_blocks(), {kRowTime, kRowSize, kRowStack});
  for (std::uint32_t b = begin / kBlockValues; b * std::uint64_t{kBlockValues} < end; ++b) {
    const std::uint32_t first = reader.load(b);
    for (std::uint32_t row = std::max(begin, first); row < std::min<std::uint64_t>(end, first + kBlockValues); ++row) {
      const std::uint32_t i = row - first;
      if (reader[kRowTime][i] > at_ns || table.free_ns(row) <= at_ns) continue;
      const std::uint64_t size = reader[kRowSize][i];
      r.bytes += size;
      ++r.count;
      const std::uint32_t site = table.site_of_stack(static_cast<std::uint32_t>(reader[kRowStack][i]));
      if (site < r.site_bytes.size()) {
        r.site_bytes[site] += size;
        ++r.site_count[site];
      }
    }
  }
  return r;
}

}  // namespace memrec::analyzer
