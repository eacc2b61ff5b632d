// The allocation table's coded columns (model/row_blocks.h) answer exactly as
// plain arrays of the same values: every row through the accessors and the
// block readers, searches by time, reads from several threads at once, and a
// growing table read between publishes at random prefixes.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include "block_table.h"
#include "model/allocation_table.h"
#include "model/column_blocks.h"
#include "model/heap_cursor.h"
#include "model/stack_replay.h"
#include "model/window_figures.h"
#include "table_compare.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint32_t kB = kBlockValues;

// As the table codes its rows (allocation_table.h).
ColumnBlocks row_store() {
  return ColumnBlocks{Coding::kAscending, Coding::kPlain, Coding::kPlain, Coding::kZigzagDelta, Coding::kPlain};
}

struct Plain {
  std::vector<std::uint64_t> time, size, stack, address, thread;
  const std::vector<std::uint64_t>& column(std::size_t c) const {
    switch (c) {
      case kRowTime:
        return time;
      case kRowSize:
        return size;
      case kRowStack:
        return stack;
      case kRowAddress:
        return address;
      case kRowThread:
        return thread;
    }
    return time;
  }
};

constexpr std::size_t kColumns[] = {kRowTime, kRowSize, kRowStack, kRowAddress, kRowThread};

// Values at the edges of what each column holds: times with gaps past 2^32
// ns and ties, sizes past 4 GiB, addresses anywhere in 64 bits or close
// together, thread indices past 2^15.
void push_random(std::mt19937_64& rng, ColumnBlocks& rows, Plain& plain) {
  const std::uint64_t before = plain.time.empty() ? 1000 : plain.time.back();
  const std::uint64_t r = rng() % 100;
  const std::uint64_t time = before + (r < 2 ? (1ull << 33) + rng() % 99 : r < 40 ? 0 : rng() % 5000);
  const std::uint64_t size = r % 7 == 0 ? (1ull << 32) + rng() % 100 : 1 + rng() % 300;
  const auto stack = static_cast<std::uint32_t>(r % 11 == 0 ? rng() % (1u << 26) : rng() % 40);
  const std::uint64_t prev_addr = plain.address.empty() ? 0x7f0000000000 : plain.address.back();
  const std::uint64_t address = r % 5 == 0 ? rng() : prev_addr + (rng() % 4096) - 2048;
  const auto thread = static_cast<std::uint32_t>(r % 13 == 0 ? rng() % 100000 : rng() % 4);
  rows.push({time, size, stack, address, thread});
  plain.time.push_back(time);
  plain.size.push_back(size);
  plain.stack.push_back(stack);
  plain.address.push_back(address);
  plain.thread.push_back(thread);
}

void check_rows_until(const ColumnBlocks& rows, const Plain& plain, std::uint64_t t) {
  CAPTURE(t);
  const auto want =
      static_cast<std::uint32_t>(std::upper_bound(plain.time.begin(), plain.time.end(), t) - plain.time.begin());
  REQUIRE(rows.count_until(t) == want);
}

void check_all(const ColumnBlocks& rows, const Plain& plain) {
  REQUIRE(rows.size() == plain.time.size());
  for (const std::size_t c : kColumns) {
    const std::vector<std::uint64_t>& want = plain.column(c);
    for (std::uint32_t r = 0; r < want.size(); ++r) {
      CAPTURE(r);
      REQUIRE(rows.get(c, r) == want[r]);
    }
  }
  BlockReader reader(rows, {kRowTime, kRowSize, kRowStack, kRowAddress, kRowThread});
  for (std::size_t b = 0; b < rows.blocks(); ++b) {
    const std::uint32_t first = reader.load(b);
    REQUIRE(first == b * kB);
    for (const std::size_t c : kColumns) {
      const std::vector<std::uint64_t>& want = plain.column(c);
      for (std::uint32_t r = first; r < std::min<std::size_t>(want.size(), first + kB); ++r) {
        REQUIRE(reader[c][r - first] == want[r]);
      }
    }
  }
  check_rows_until(rows, plain, 0);
  check_rows_until(rows, plain, ~0ull);
  for (std::size_t i = 0; i < plain.time.size(); i += 97) {
    check_rows_until(rows, plain, plain.time[i]);
    check_rows_until(rows, plain, plain.time[i] - 1);
    check_rows_until(rows, plain, plain.time[i] + 1);
  }
}

TEST_SUITE("analyzer/compact_table") {
  TEST_CASE("coded blocks and the raw tail answer as plain arrays, also read between pushes") {
    for (std::uint64_t seed = 1; seed <= 4; ++seed) {
      CAPTURE(seed);
      std::mt19937_64 rng(seed);
      ColumnBlocks rows = row_store();
      Plain plain;
      const std::size_t n = kB * 3 + rng() % kB;
      for (std::size_t i = 0; i < n; ++i) {
        push_random(rng, rows, plain);
        // Random reads as the rows come: the tail, the block just coded, older ones.
        if (rng() % 500 == 0) {
          for (int k = 0; k < 50; ++k) {
            const auto r = static_cast<std::uint32_t>(rng() % plain.time.size());
            const std::size_t c = kColumns[rng() % 5];
            REQUIRE(rows.get(c, r) == plain.column(c)[r]);
          }
          check_rows_until(rows, plain, plain.time[rng() % plain.time.size()]);
        }
      }
      check_all(rows, plain);
      // Moved, it keeps its rows (and what the per-thread cache holds of them).
      const ColumnBlocks moved = std::move(rows);
      check_all(moved, plain);
    }
  }

  TEST_CASE("an empty table and a table of exactly whole blocks") {
    ColumnBlocks empty = row_store();
    CHECK(empty.size() == 0);
    CHECK(empty.blocks() == 0);
    CHECK(empty.count_until(~0ull) == 0);
    std::mt19937_64 rng(9);
    ColumnBlocks rows = row_store();
    Plain plain;
    for (std::uint32_t i = 0; i < 2 * kB; ++i) push_random(rng, rows, plain);
    CHECK(rows.blocks() == 2);
    check_all(rows, plain);
  }

  TEST_CASE("threads reading the same blocks at once each get exact values") {
    std::mt19937_64 rng(5);
    ColumnBlocks rows = row_store();
    Plain plain;
    for (std::uint32_t i = 0; i < 6 * kB + 100; ++i) push_random(rng, rows, plain);
    std::vector<int> wrong(4, 0);
    std::vector<std::jthread> readers;
    for (std::size_t t = 0; t < wrong.size(); ++t) {
      readers.emplace_back([&, t] {
        std::mt19937_64 mine(100 + t);
        for (int k = 0; k < 20000; ++k) {
          const auto r = static_cast<std::uint32_t>(mine() % plain.time.size());
          const std::size_t c = kColumns[mine() % 5];
          if (rows.get(c, r) != plain.column(c)[r]) ++wrong[t];
        }
      });
    }
    readers.clear();
    for (const int w : wrong) CHECK(w == 0);
  }

  // The rows a table must hold for the events: the n-th allocation is row n,
  // at the latest time seen so far, its stack clamped as StackReplay's.
  struct Event {
    HeapEvent e;
    std::uint32_t thread;
  };

  TEST_CASE("a growing table published at random prefixes holds every row's values as the events gave them") {
    std::mt19937_64 rng(77);
    std::vector<Event> events;
    std::vector<std::uint64_t> live;
    std::uint64_t time = 1;
    while (events.size() < 5 * kB * 2) {
      time += rng() % 3 == 0 ? 0 : rng() % 1000;
      const auto thread = static_cast<std::uint32_t>(rng() % 3);
      if (live.empty() || rng() % 2 == 0) {
        const std::uint64_t addr = 0x10000 + (rng() % 100000) * 16;
        if (std::find(live.begin(), live.end(), addr) != live.end()) continue;
        events.push_back({HeapEvent{time, addr, 1 + rng() % 1000, StackId{static_cast<std::uint32_t>(rng() % 9)},
                                    HeapOp::kAlloc, false},
                          thread});
        live.push_back(addr);
      } else {
        const std::size_t k = rng() % live.size();
        events.push_back({HeapEvent{time, live[k], 0, {}, HeapOp::kFree, false}, thread});
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      }
    }
    Plain plain;
    AllocationTableBuilder builder{AllocationTableBuilder::Growing{}};
    StackReplay replay(TimeWindow{});
    std::size_t fed = 0;
    while (fed < events.size()) {
      const std::size_t to = std::min(events.size(), fed + 1 + rng() % 3000);
      for (; fed < to; ++fed) {
        const Event& ev = events[fed];
        std::uint32_t released = kNoRow;
        replay.on_events({&ev.e, 1}, ev.thread, {&released, 1});
        builder.on_tagged_events({&ev.e, 1}, {&released, 1}, ev.thread);
        if (ev.e.op == HeapOp::kAlloc) {
          plain.time.push_back(ev.e.time_ns);
          plain.size.push_back(ev.e.size);
          plain.stack.push_back(ev.e.stack.value);
          plain.address.push_back(ev.e.addr);
          plain.thread.push_back(ev.thread);
        }
      }
      const AllocationTable& t = builder.publish();
      REQUIRE(t.rows() == plain.time.size());
      for (std::uint32_t r = 0; r < t.rows(); ++r) {
        CAPTURE(r);
        REQUIRE(t.alloc_ns(r) == plain.time[r]);
        REQUIRE(t.size(r) == plain.size[r]);
        REQUIRE(t.stack(r) == plain.stack[r]);
        REQUIRE(t.address(r) == plain.address[r]);
        REQUIRE(t.thread(r) == plain.thread[r]);
      }
      // The finished table of the same prefix (lifetimes coded, frees as blocks) agrees row by row.
      AllocationTableBuilder once;
      StackReplay once_replay(TimeWindow{});
      for (std::size_t i = 0; i < fed; ++i) {
        std::uint32_t released = kNoRow;
        once_replay.on_events({&events[i].e, 1}, events[i].thread, {&released, 1});
        once.on_tagged_events({&events[i].e, 1}, {&released, 1}, events[i].thread);
      }
      check_same(once.finish(), t);
      for (std::uint32_t k = 0; k < t.frees(); k += 7) {
        REQUIRE(t.free_time(k) == t.free_ns(t.free_row(k)));
      }
      for (int k = 0; k < 20; ++k) {
        const std::uint64_t at = plain.time[rng() % plain.time.size()] + rng() % 3 - 1;
        const auto want =
            static_cast<std::uint32_t>(std::upper_bound(plain.time.begin(), plain.time.end(), at) - plain.time.begin());
        REQUIRE(rows_until(t, at) == want);
        std::uint32_t frees = 0;
        while (frees < t.frees() && t.free_time(frees) <= at) ++frees;
        REQUIRE(frees_until(t, at) == frees);
      }
    }
    CHECK(plain.time.size() > 2 * kB);
  }

  TEST_CASE("sparklines read by site and in one pass over the range's blocks equal a count of every block") {
    std::mt19937_64 rng(31);
    std::vector<Block> blocks;
    for (std::uint32_t i = 0; i < 3 * kB + 500; ++i) {
      const std::uint64_t a = 1000 + i * 10;
      const std::uint64_t r = rng() % 10;
      const std::uint64_t f = r == 0 ? kNeverFreed : a + 1 + (r < 5 ? rng() % 50 : rng() % 100000);
      blocks.push_back({a, f, 1 + rng() % 100, static_cast<std::uint32_t>(rng() % 5)});
    }
    const AllocationTable t = table_of(blocks, 5);
    constexpr std::uint32_t n = 16;
    for (const TimeWindow w : {TimeWindow{0, ~0ull - 1}, TimeWindow{20000, 90000}, TimeWindow{150000, 160000}}) {
      CAPTURE(w.from_ns);
      const auto span = static_cast<unsigned __int128>(w.to_ns - w.from_ns) + 1;
      const auto want = [&](std::uint32_t site, std::uint32_t j) {
        const auto len = static_cast<std::uint64_t>(span * (j + 1) / n);
        const std::uint64_t end = len == 0 ? w.from_ns : w.from_ns + len - 1;
        std::uint64_t bytes = 0;
        for (const Block& b : blocks) {
          if (b.site == site && b.alloc_ns <= end && b.free_ns > end) bytes += b.size;
        }
        return bytes;
      };
      // All five sites at once (their rows touch every block: one pass), then each alone (by its rows).
      const std::vector<std::uint32_t> all = {4, 0, 1, 2, 3};
      const std::vector<std::uint64_t> together = site_sparklines(t, all, w, n);
      for (std::size_t i = 0; i < all.size(); ++i) {
        const std::vector<std::uint64_t> alone = site_sparklines(t, {all[i]}, w, n);
        for (std::uint32_t j = 0; j < n; ++j) {
          CAPTURE(j);
          REQUIRE(together[i * n + j] == want(all[i], j));
          REQUIRE(alone[j] == want(all[i], j));
        }
      }
    }
  }

  TEST_CASE("a range's allocations by site from the blocks' sums equal a count of every block") {
    std::mt19937_64 rng(37);
    std::vector<Block> blocks;
    for (std::uint32_t i = 0; i < 3 * kB + 500; ++i) {
      const std::uint64_t a = 1000 + i * 10;
      const std::uint64_t f = rng() % 10 == 0 ? kNeverFreed : a + 1 + rng() % 100000;
      // The second block's rows are of more sites than a block's sums keep.
      const std::uint64_t sites = i / kB == 1 ? 100 : 5;
      blocks.push_back({a, f, 1 + rng() % 100, static_cast<std::uint32_t>(rng() % sites)});
    }
    const AllocationTable t = table_of(blocks, 100);
    CHECK(t.block_site_sums(0).has_value());
    CHECK_FALSE(t.block_site_sums(1).has_value());
    for (const TimeWindow w : {TimeWindow{0, ~0ull - 1}, TimeWindow{1000 + 10 * kB, 1000 + 20 * kB},
                               TimeWindow{20005, 90000}, TimeWindow{150000, 160000}, TimeWindow{160000, 150000}}) {
      CAPTURE(w.from_ns);
      CAPTURE(w.to_ns);
      const SiteAllocations got = site_allocations(t, w);
      const WindowFigures figures = window_figures(t, w);
      REQUIRE(got.count.size() == 100);
      for (std::uint32_t site = 0; site < 100; ++site) {
        CAPTURE(site);
        std::uint64_t count = 0;
        std::uint64_t bytes = 0;
        for (const Block& b : blocks) {
          if (b.site == site && b.alloc_ns >= w.from_ns && b.alloc_ns <= w.to_ns) {
            ++count;
            bytes += b.size;
          }
        }
        REQUIRE(got.count[site] == count);
        REQUIRE(got.bytes[site] == bytes);
        REQUIRE(figures.sites[site].allocations == count);
        REQUIRE(figures.sites[site].allocated_bytes == bytes);
      }
    }
  }
}

}  // namespace
}  // namespace memrec::analyzer
