// Compares two allocation tables row by row and index by index: every
// answer a query can read from them (allocation_table_test, growing_table_test).
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "model/allocation_table.h"

namespace memrec::analyzer {

inline void check_same(const AllocationTable& a, const AllocationTable& b) {
  REQUIRE(a.rows() == b.rows());
  REQUIRE(a.frees() == b.frees());
  for (std::uint32_t r = 0; r < a.rows(); ++r) {
    CAPTURE(r);
    REQUIRE(a.alloc_ns(r) == b.alloc_ns(r));
    REQUIRE(a.free_ns(r) == b.free_ns(r));
    REQUIRE(a.size(r) == b.size(r));
    REQUIRE(a.site(r) == b.site(r));
    REQUIRE(a.address(r) == b.address(r));
    REQUIRE(a.thread(r) == b.thread(r));
    REQUIRE(a.temporary(r) == b.temporary(r));
    REQUIRE(a.replaced(r) == b.replaced(r));
    REQUIRE(a.realloc_from(r) == b.realloc_from(r));
    REQUIRE(a.realloc_to(r) == b.realloc_to(r));
  }
  for (std::uint32_t k = 0; k < a.frees(); ++k) {
    REQUIRE(a.free_row(k) == b.free_row(k));
    REQUIRE(a.rows_before_free(k) == b.rows_before_free(k));
  }
  REQUIRE(a.realloc_rows() == b.realloc_rows());
  REQUIRE(a.sites() == b.sites());
  for (std::uint32_t site = 0; site < a.sites(); ++site) {
    const auto [a0, a1] = a.site_rows(site);
    const auto [b0, b1] = b.site_rows(site);
    REQUIRE(std::vector<std::uint32_t>(a0, a1) == std::vector<std::uint32_t>(b0, b1));
  }
  CHECK(a.unmatched_free_ns() == b.unmatched_free_ns());
  CHECK(a.replaced_ns() == b.replaced_ns());
  CHECK(a.mmap_ns() == b.mmap_ns());
  for (std::size_t i = 0; i < (a.rows() + AllocationTable::kSkipRows - 1) / AllocationTable::kSkipRows; ++i) {
    REQUIRE(a.skip_max_free(i) == b.skip_max_free(i));
  }
  REQUIRE(a.checkpoints().size() == b.checkpoints().size());
  for (std::size_t i = 0; i < a.checkpoints().size(); ++i) {
    const HeapCheckpoint& x = a.checkpoints()[i];
    const HeapCheckpoint& y = b.checkpoints()[i];
    CHECK(std::tie(x.rows, x.frees, x.heap_bytes, x.live_count, x.block_max_bytes, x.block_max_alloc_bytes,
                   x.block_max_alloc_at) == std::tie(y.rows, y.frees, y.heap_bytes, y.live_count, y.block_max_bytes,
                                                     y.block_max_alloc_bytes, y.block_max_alloc_at));
  }
}

}  // namespace memrec::analyzer
