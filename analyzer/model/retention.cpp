#include "model/retention.h"

#include "model/heap_cursor.h"
#include "model/row_reader.h"

namespace memrec::analyzer {

// Rows are in allocation order, so their times never decrease: the span's
// rows are one run, found by the blocks' first times, and read a block at a time.
Retention retained(const AllocationTable& table, std::uint64_t from_ns, std::uint64_t to_ns, std::uint64_t at_ns) {
  Retention r;
  r.site_bytes.assign(table.sites(), 0);
  r.site_count.assign(table.sites(), 0);
  const std::uint32_t begin = from_ns == 0 ? 0 : rows_until(table, from_ns - 1);
  const std::uint32_t end = to_ns == UINT64_MAX ? static_cast<std::uint32_t>(table.rows()) : rows_until(table, to_ns);
  RowReader reader(table, {kRowTime, kRowSize, kRowStack});
  for (std::uint32_t row = begin; row < end; ++row) {
    reader.seek(row);
    if (reader[kRowTime] > at_ns || reader.free_ns() <= at_ns) continue;
    const std::uint64_t size = reader[kRowSize];
    r.bytes += size;
    ++r.count;
    const std::uint32_t site = table.site_of_stack(static_cast<std::uint32_t>(reader[kRowStack]));
    if (site < r.site_bytes.size()) {
      r.site_bytes[site] += size;
      ++r.site_count[site];
    }
  }
  return r;
}

}  // namespace memrec::analyzer
