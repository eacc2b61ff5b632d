// The filtered, sorted pages of rows of /allocations (docs/api.md). Called
// by server/view_allocations.cpp; pure.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/allocation_filter.h"
#include "model/allocation_table.h"

namespace memrec::analyzer {

// The rows /allocations keeps (docs/api.md): allocated in rows [lo, hi), of
// `site` if set, of a realloc chain if `realloc`, and passing `rows`.
struct RowFilter {
  std::uint32_t lo = 0;
  std::uint32_t hi = 0;
  std::optional<std::uint32_t> site;
  bool realloc = false;  // only rows of a realloc chain (AllocationTable::realloc_rows)
  AllocationFilter rows;
};
enum class RowSort { kTime, kSize, kLifetime, kAddress };
struct RowPage {
  std::uint64_t total = 0;  // every match
  std::vector<std::uint32_t> rows;
};
// Free time minus allocation time; kNeverFreed for a block never freed (it
// sorts after every lifetime, passes any minimum and fails any maximum).
std::uint64_t row_lifetime(const AllocationTable& t, std::uint32_t row);
// The matches of `f` ranked [offset, offset + limit) by `sort` (ties by row,
// ascending in either order) and how many match in all. Sorted by time it
// counts per chunk and walks the page's chunks; by another key it keeps a
// heap for a page near the front, else it narrows a histogram of the keys to
// the page's (two or three scans, no copy of the matches).
RowPage allocation_page(const AllocationTable& t, const RowFilter& f, RowSort sort, bool descending,
                        std::uint64_t offset, std::uint64_t limit);

}  // namespace memrec::analyzer
