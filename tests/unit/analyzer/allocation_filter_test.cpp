// The allocation filter shared by memrec view's table and memrec export's
// selection, condition by condition, on a hand-made table.
#include "model/allocation_filter.h"

#include <doctest/doctest.h>

#include <unordered_map>
#include <vector>

#include "table_feed.h"

namespace memrec::analyzer {
namespace {

HeapEvent alloc(std::uint64_t t, std::uint64_t addr, std::uint64_t size, std::uint32_t stack) {
  return HeapEvent{t, addr, size, StackId{stack}, HeapOp::kAlloc};
}
HeapEvent release(std::uint64_t t, std::uint64_t addr) { return HeapEvent{t, addr, 0, {}, HeapOp::kFree}; }

// Rows: 0 (thread 0, site 1) 100 bytes at 10, freed at 20 (lives 10);
//       1 (thread 1, site 2) 5000 bytes at 15, freed at 115 (lives 100);
//       2 (thread 0, site 1) 40 bytes at 30, never freed.
AllocationTable table() {
  AllocationTableBuilder b;
  TableFeed feed(b);
  feed(alloc(10, 0xa, 100, 1), 0);
  feed(alloc(15, 0xb, 5000, 2), 1);
  feed(release(20, 0xa), 0);
  feed(alloc(30, 0xc, 40, 1), 0);
  feed(release(115, 0xb), 1);
  AllocationTable t = b.finish();
  t.set_sites(std::unordered_map<std::uint32_t, std::uint32_t>{{1, 1}, {2, 2}}, 3);
  return t;
}

std::vector<bool> rows_of(const AllocationFilter& f) { return select_rows(table(), f); }

}  // namespace

TEST_SUITE("analyzer/allocation_filter") {
  TEST_CASE("no condition keeps every row") {
    const AllocationFilter f;
    CHECK(f.keeps_all());
    CHECK(rows_of(f) == std::vector<bool>{true, true, true});
  }

  TEST_CASE("sizes are bounded on both ends, both included") {
    AllocationFilter f;
    f.min_size = 40;
    f.max_size = 100;
    CHECK(rows_of(f) == std::vector<bool>{true, false, true});
  }

  TEST_CASE("a block never freed passes every shortest lifetime and fails every longest") {
    AllocationFilter shortest;
    shortest.min_life_ns = 11;
    CHECK(rows_of(shortest) == std::vector<bool>{false, true, true});
    AllocationFilter longest;
    longest.max_life_ns = 100;
    CHECK(rows_of(longest) == std::vector<bool>{true, true, false});
  }

  TEST_CASE("alive at an instant: allocated at or before it and not freed by then") {
    AllocationFilter f;
    f.alive_at_ns = 20;  // row 0 is freed at 20: gone
    CHECK(rows_of(f) == std::vector<bool>{false, true, false});
    f.alive_at_ns = 30;
    CHECK(rows_of(f) == std::vector<bool>{false, true, true});
  }

  TEST_CASE("leaked at a range's end: not freed by it") {
    AllocationFilter f;
    f.live_after_ns = 114;
    CHECK(rows_of(f) == std::vector<bool>{false, true, true});
    f.live_after_ns = 115;
    CHECK(rows_of(f) == std::vector<bool>{false, false, true});
  }

  TEST_CASE("a thread and a set of sites narrow it further") {
    AllocationFilter f;
    f.thread = 0;
    CHECK(rows_of(f) == std::vector<bool>{true, false, true});
    AllocationFilter sites;
    keep_sites(sites, {false, false, true});
    CHECK(rows_of(sites) == std::vector<bool>{false, true, false});
    keep_sites(sites, {false, true, false});  // and site 1: none is both
    CHECK(rows_of(sites) == std::vector<bool>{false, false, false});
  }
}

}  // namespace memrec::analyzer
