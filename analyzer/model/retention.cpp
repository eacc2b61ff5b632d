#include "model/retention.h"

namespace memrec::analyzer {

Retention retained(const AllocationTable& table, std::uint64_t from_ns, std::uint64_t to_ns, std::uint64_t at_ns) {
  Retention r;
  r.site_bytes.assign(table.sites(), 0);
  r.site_count.assign(table.sites(), 0);
  // Rows are in allocation order, so their times never decrease: the span's
  // rows are one run, found by bisection.
  const auto first_at_or_after = [&](std::uint64_t t) {
    std::uint64_t lo = 0, hi = table.rows();
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (table.alloc_ns(static_cast<std::uint32_t>(mid)) < t) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  };
  const std::uint64_t end = to_ns == UINT64_MAX ? table.rows() : first_at_or_after(to_ns + 1);
  for (std::uint64_t i = first_at_or_after(from_ns); i < end; ++i) {
    const auto row = static_cast<std::uint32_t>(i);
    if (table.alloc_ns(row) > at_ns || table.free_ns(row) <= at_ns) continue;
    const std::uint64_t size = table.size(row);
    r.bytes += size;
    ++r.count;
    const std::uint32_t site = table.site(row);
    if (site < r.site_bytes.size()) {
      r.site_bytes[site] += size;
      ++r.site_count[site];
    }
  }
  return r;
}

}  // namespace memrec::analyzer
