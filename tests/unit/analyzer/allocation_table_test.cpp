// The allocation table and its range/instant queries against hand-made event
// lists, and against StackReplay (the report's model) on random ones: every
// window's figures must be the report's, exactly. /allocations' pages
// (allocation_page) against a filter and a full sort written out plainly.
#include "model/allocation_table.h"
#include "model/allocation_pages.h"
#include "model/heap_cursor.h"
#include "model/window_figures.h"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "model/stack_replay.h"
#include "table_compare.h"
#include "table_feed.h"

namespace memrec::analyzer {
namespace {

HeapEvent alloc(std::uint64_t t, std::uint64_t addr, std::uint64_t size, std::uint32_t stack = 1,
                bool realloc = false) {
  return HeapEvent{t, addr, size, StackId{stack}, HeapOp::kAlloc, realloc};
}
HeapEvent release(std::uint64_t t, std::uint64_t addr, bool realloc = false) {
  return HeapEvent{t, addr, 0, {}, HeapOp::kFree, realloc};
}

struct Event {
  HeapEvent e;
  std::uint32_t thread = 0;
};

// Stacks map to sites one to one (site = stack id). Events go in runs of
// one thread, each run replayed, then handed on with its tags, as memrec
// view's tee does (TableFeed takes them one at a time).
AllocationTable build(const std::vector<Event>& events, std::uint32_t stacks = 4) {
  AllocationTableBuilder b;
  StackReplay replay(TimeWindow{});
  std::vector<HeapEvent> run;
  std::vector<std::uint32_t> tags;
  for (std::size_t i = 0; i < events.size();) {
    run.clear();
    const std::uint32_t thread = events[i].thread;
    for (; i < events.size() && events[i].thread == thread; ++i) run.push_back(events[i].e);
    tags.assign(run.size(), 0);
    replay.on_events(run, thread, tags);
    b.on_tagged_events(run, tags, thread);
  }
  AllocationTable t = b.finish();
  std::unordered_map<std::uint32_t, std::uint32_t> site_of_stack;
  for (std::uint32_t s = 0; s < stacks; ++s) site_of_stack[s] = s;
  t.set_sites(site_of_stack, stacks);
  return t;
}

TEST_SUITE("analyzer/allocation_table") {
  TEST_CASE("the heap at an instant counts every event at or before it") {
    const AllocationTable t = build(
        {{alloc(10, 0xa, 100)}, {alloc(20, 0xb, 50)}, {release(30, 0xa)}, {alloc(30, 0xc, 10)}, {release(40, 0xb)}});
    CHECK(t.rows() == 3);
    CHECK(cursor_at(t, 9).heap_bytes == 0);
    CHECK(cursor_at(t, 10).heap_bytes == 100);
    CHECK(cursor_at(t, 25).heap_bytes == 150);
    CHECK(cursor_at(t, 30).heap_bytes == 60);
    CHECK(cursor_at(t, 30).live_count == 2);
    CHECK(cursor_at(t, 1000).heap_bytes == 10);
    CHECK(cursor_before(t, 30).heap_bytes == 150);
    CHECK(t.free_ns(0) == 30);
    CHECK(t.free_ns(2) == kNeverFreed);
  }

  TEST_CASE("a window's peak is the highest heap after an allocation in it, the heap at its start a candidate") {
    const AllocationTable t = build(
        {{alloc(10, 0xa, 100)}, {alloc(20, 0xb, 50)}, {release(30, 0xa)}, {alloc(30, 0xc, 10)}, {release(40, 0xb)}});
    WindowPeak p = window_peak(t, {0, 100});
    CHECK(p.bytes == 150);
    CHECK(p.time_ns == 20);
    p = window_peak(t, {30, 100});
    CHECK(p.bytes == 150);  // live when the window opens
    CHECK(p.time_ns == 30);
    p = window_peak(t, {41, 100});  // no event: the window never opens
    CHECK(p.bytes == 0);
    CHECK(!p.time_ns);
    const SiteLive live = live_by_site(t, window_peak(t, {0, 100}).at);
    CHECK(live.bytes[1] == 150);
    CHECK(live.count[1] == 2);
  }

  TEST_CASE("a realloc links the block it released to the one it allocated") {
    const AllocationTable t = build({{alloc(10, 0xa, 8)},
                                     {release(20, 0xa, true), 1},
                                     {alloc(5, 0xf, 1), 0},
                                     {alloc(21, 0xb, 16, 2, true), 1},
                                     {release(30, 0xb, true)},
                                     {alloc(31, 0xc, 32, 2, true)}});
    REQUIRE(t.rows() == 4);
    // Rows are in the order given: 0xa, 0xf, 0xb, 0xc.
    CHECK(!t.realloc_from(0));
    CHECK(t.realloc_to(0) == 2u);
    CHECK(t.realloc_from(2) == 0u);
    CHECK(t.realloc_to(2) == 3u);
    CHECK(t.realloc_from(3) == 2u);
    CHECK(!t.realloc_to(3));
    CHECK(!t.realloc_to(1));
    CHECK(t.realloc_rows() == std::vector<std::uint32_t>{0, 2, 3});
    RowFilter chains;
    chains.hi = 4;
    chains.realloc = true;
    CHECK(allocation_page(t, chains, RowSort::kSize, true, 0, 10).rows == std::vector<std::uint32_t>{3, 2, 0});
    chains.lo = 1;  // a range after the chain began: its later rows only
    CHECK(allocation_page(t, chains, RowSort::kTime, false, 0, 10).rows == std::vector<std::uint32_t>{2, 3});
  }

  TEST_CASE("a block freed by its thread before it allocates again is temporary") {
    const AllocationTable t = build({{alloc(1, 0xa, 8)},
                                     {release(2, 0xa)},
                                     {alloc(3, 0xb, 8)},
                                     {alloc(4, 0xc, 8)},
                                     {release(5, 0xb)},
                                     {alloc(6, 0xd, 8), 1},
                                     {release(7, 0xd), 0}});
    CHECK(t.temporary(0));
    CHECK(!t.temporary(1));
    CHECK(!t.temporary(3));  // freed by another thread
  }

  TEST_CASE("sparklines hold a site's live bytes at the end of each part of the range") {
    const AllocationTable t = build({{alloc(0, 0xa, 100, 1)},
                                     {alloc(10, 0xb, 7, 2)},
                                     {release(50, 0xa)},
                                     {alloc(60, 0xc, 5, 1)},
                                     {release(99, 0xc)}});
    // Parts of [0, 99] end at 24, 49, 74, 99.
    const std::vector<std::uint64_t> s = site_sparklines(t, {1, 2}, {0, 99}, 4);
    CHECK(s == std::vector<std::uint64_t>{100, 100, 5, 0, 7, 7, 7, 7});
  }

  TEST_CASE("every window's figures equal StackReplay's on random event lists") {
    std::mt19937_64 rng(42);
    for (int round = 0; round < 30; ++round) {
      CAPTURE(round);
      // Three threads, times that repeat, frees of unknown addresses,
      // allocations over live blocks and realloc pairs.
      std::vector<Event> events;
      std::vector<std::uint64_t> live;
      std::uint64_t time = 100;
      const int n = 200 + static_cast<int>(rng() % 3000);
      for (int i = 0; i < n; ++i) {
        time += rng() % 3;
        const auto thread = static_cast<std::uint32_t>(rng() % 3);
        const std::uint64_t r = rng() % 100;
        if (r < 45 || live.empty()) {
          const std::uint64_t addr = (r < 3 && !live.empty()) ? live[rng() % live.size()] : 0x1000 + rng() % 5000 * 16;
          events.push_back({alloc(time, addr, 1 + rng() % 500, static_cast<std::uint32_t>(rng() % 4)), thread});
          live.push_back(addr);
        } else if (r < 90) {
          const std::size_t k = rng() % live.size();
          events.push_back({release(time, live[k]), thread});
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
        } else if (r < 95) {
          const std::size_t k = rng() % live.size();
          events.push_back({release(time, live[k], true), thread});
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
          time += rng() % 2;
          const std::uint64_t addr = 0x1000 + rng() % 5000 * 16;
          events.push_back({alloc(time, addr, 1 + rng() % 500, 3, true), thread});
          live.push_back(addr);
        } else {
          events.push_back({release(time, 0xdead0000 + rng() % 7), thread});
        }
      }
      const AllocationTable t = build(events);
      for (int w = 0; w < 20; ++w) {
        std::uint64_t a = 100 + rng() % (time - 90);
        std::uint64_t b = 100 + rng() % (time - 90);
        if (a > b) std::swap(a, b);
        if (w == 0) a = 0, b = ~0ull;
        CAPTURE(a);
        CAPTURE(b);
        const TimeWindow window{a, b};
        StackReplay replay(window);
        for (const Event& ev : events) replay.on_event(ev.e, ev.thread);
        replay.finish();
        const HeapTotals& want = replay.totals();
        const WindowFigures got = window_figures(t, window);
        CHECK(got.totals.allocations == want.allocations);
        CHECK(got.totals.frees == want.frees);
        CHECK(got.totals.allocated_bytes == want.allocated_bytes);
        CHECK(got.totals.temporary == want.temporary);
        CHECK(got.totals.peak_bytes == want.peak_bytes);
        CHECK(got.totals.peak_time_ns == want.peak_time_ns);
        CHECK(got.totals.leaked_bytes == want.leaked_bytes);
        CHECK(got.totals.leaked_count == want.leaked_count);
        CHECK(got.totals.unmatched_frees == want.unmatched_frees);
        CHECK(got.totals.replaced_blocks == want.replaced_blocks);
        const StackColumns& c = replay.columns();
        for (std::uint32_t s = 0; s < 4; ++s) {
          CAPTURE(s);
          const bool has = s < c.size();
          CHECK(got.sites[s].allocations == (has ? c.allocations[s] : 0));
          CHECK(got.sites[s].allocated_bytes == (has ? c.allocated_bytes[s] : 0));
          CHECK(got.sites[s].temporary == (has ? c.temporary[s] : 0));
          CHECK(got.sites[s].leaked_bytes == (has ? c.leaked_bytes[s] : 0));
          CHECK(got.sites[s].leaked_count == (has ? c.leaked_count[s] : 0));
          CHECK(got.sites[s].peak_bytes == (has ? c.peak_bytes[s] : 0));
        }
      }
      // The heap at each event's time, against a replay to that time.
      for (int k = 0; k < 10; ++k) {
        const std::uint64_t at = 100 + rng() % (time - 90);
        StackReplay replay(TimeWindow{0, at});
        for (const Event& ev : events) replay.on_event(ev.e, ev.thread);
        const EventCursor c = cursor_at(t, at);
        CHECK(c.heap_bytes == replay.live_bytes());
        CHECK(c.live_count == replay.live_count());
      }
    }
  }

  TEST_CASE("allocation times far apart keep every ns, and the merge stays exact at equal times") {
    // Rows 100 ms apart: a block of 256 rows spans more than 2^32 ns.
    std::vector<Event> events;
    for (std::uint64_t i = 0; i < 600; ++i) {
      events.push_back({alloc(i * 100'000'000 + 7, 0x1000 + i * 16, 10)});
      if (i % 2 == 1) events.push_back({release(i * 100'000'000 + 7, 0x1000 + i * 16)});  // same ns, same thread
    }
    const AllocationTable t = build(events);
    REQUIRE(t.rows() == 600);
    for (std::uint32_t r = 0; r < 600; ++r) CHECK(t.alloc_ns(r) == r * 100'000'000ull + 7);
    CHECK(t.rows_before_free(0) == 2);  // after row 1, its own allocation
    CHECK(cursor_at(t, 100'000'007).heap_bytes == 10);
    CHECK(cursor_at(t, 59'900'000'007).heap_bytes == 300 * 10);
    const WindowPeak p = window_peak(t, {0, ~0ull});
    CHECK(p.bytes == 300 * 10 + 10);  // after the last odd row's allocation, before its free
    CHECK(p.time_ns == 59'900'000'007ull);
  }

  TEST_CASE("the table stays within its memory budget per allocation") {
    std::vector<Event> events;
    for (std::uint64_t i = 0; i < 100000; ++i) {
      events.push_back({alloc(i * 2, 0x1000 + (i % 4096) * 64, 1 + i % 1024, 1 + i % 3)});
      if (i >= 4095) events.push_back({release(i * 2 + 1, 0x1000 + ((i + 1) % 4096) * 64)});
    }
    const AllocationTable t = build(events);
    MESSAGE("bytes per allocation: ", t.memory_bytes() / t.rows());
    CHECK(t.memory_bytes() / t.rows() <= 37);  // docs/api.md: 36 and a bit an event
    // A single thread's dump on the writer's ticks: frees share their
    // allocation's ns, and the merge order costs no more.
    for (Event& ev : events) ev.e.time_ns /= 64;
    const AllocationTable coarse = build(events);
    CHECK(coarse.memory_bytes() / coarse.rows() <= 37);
  }

  TEST_CASE("a block of rows spanning 2^32 ns or more keeps exact times") {
    // Blocks of 256 rows: the second spans 255 × 2^25 ns (narrow), the third
    // 255 × 2^30 (wide), the fourth is narrow again, the last one partial and wide.
    std::vector<Event> events;
    std::vector<std::uint64_t> times;
    std::uint64_t t = 1000;
    for (std::uint32_t i = 0; i < 256 * 4 + 100; ++i) {
      const std::uint32_t block = i / 256;
      t += block == 2 || block == 4 ? (1ull << 30) : block == 1 ? (1ull << 25) : 3;
      times.push_back(t);
      events.push_back({alloc(t, 0x1000 + i * 16, 8)});
    }
    const AllocationTable table = build(events);
    REQUIRE(table.rows() == times.size());
    for (std::uint32_t r = 0; r < table.rows(); ++r) REQUIRE(table.alloc_ns(r) == times[r]);
  }

  TEST_CASE("a free the replay put after allocations of its own ns counts them") {
    // A thread's malloc and free at one ns: the free comes after that
    // allocation, not before it as its time alone would say; few such frees
    // or most of them.
    for (const std::uint32_t same_ns : {3u, 900u}) {
      std::vector<Event> events;
      std::vector<std::uint32_t> rows_before;
      std::uint32_t rows = 0;
      for (std::uint32_t i = 0; i < 1000; ++i) {
        const std::uint64_t t = 100 + 10 * i;
        events.push_back({alloc(t, 0x1000 + i * 16, 8)});
        ++rows;
        events.push_back({release(i < same_ns ? t : t + 5, 0x1000 + i * 16)});
        rows_before.push_back(rows);
      }
      const AllocationTable table = build(events);
      REQUIRE(table.frees() == rows_before.size());
      for (std::uint32_t k = 0; k < table.frees(); ++k) REQUIRE(table.rows_before_free(k) == rows_before[k]);
      CHECK(cursor_at(table, 100).heap_bytes == 0);
      CHECK(cursor_at(table, 100 + 10 * 999 + 4).heap_bytes == 8);
    }
  }

  TEST_CASE("a peak inside a block of checkpointed events is found at its event") {
    // 1,500 allocations, then frees and allocations in turn, the frees
    // larger: the peak is the last of the first run, event 1,499, inside the
    // second block of 1,024 events, which a window over blocks skips whole.
    std::vector<Event> events;
    std::uint64_t t = 1000;
    for (std::uint32_t i = 0; i < 1500; ++i) events.push_back({alloc(t += 7, 0x1000 + i * 64, 100 + i % 3)});
    for (std::uint32_t i = 0; i < 1500; ++i) {
      events.push_back({release(t += 7, 0x1000 + i * 64)});
      events.push_back({alloc(t += 7, 0x200000 + i * 64, 50)});
    }
    const AllocationTable table = build(events);
    for (const TimeWindow w : {TimeWindow{0, ~0ull}, TimeWindow{1000, t}, TimeWindow{1005, t - 3}}) {
      StackReplay replay(w);
      for (const Event& ev : events) replay.on_event(ev.e, ev.thread);
      replay.finish();
      const WindowPeak p = window_peak(table, w);
      CHECK(p.bytes == replay.totals().peak_bytes);
      REQUIRE(p.time_ns);
      CHECK(*p.time_ns == replay.totals().peak_time_ns);
      CHECK(*p.time_ns == 1000 + 7 * 1500);
      CHECK(p.at.position == 1500);
    }
  }

  TEST_CASE("the merge order holds over many checkpoint blocks, at equal times and not") {
    // 140,000 frees at their allocation's ns, then 400,000 later: rows before
    // each free are found from a checkpoint and the order's bits.
    std::vector<Event> events;
    std::vector<std::uint32_t> rows_before;
    std::uint32_t rows = 0;
    std::uint64_t t = 100;
    for (std::uint32_t i = 0; i < 540000; ++i) {
      t += 10;
      const std::uint64_t addr = 0x1000 + (i % 64) * 16;
      events.push_back({alloc(t, addr, 8 + i % 5)});
      ++rows;
      events.push_back({release(i < 140000 ? t : t + 5, addr)});
      rows_before.push_back(rows);
    }
    const AllocationTable table = build(events);
    REQUIRE(table.frees() == rows_before.size());
    for (std::uint32_t k = 0; k < table.frees(); ++k) REQUIRE(table.rows_before_free(k) == rows_before[k]);
    // Row i is allocated at 110 + 10 i.
    CHECK(cursor_at(table, 110).heap_bytes == 0);
    CHECK(cursor_at(table, 110 + 10 * 139999).heap_bytes == 0);
    CHECK(cursor_at(table, 110 + 10 * 140000).heap_bytes == 8);  // row 140,000's free is 5 ns later
    CHECK(cursor_at(table, 110 + 10 * 140000 + 5).heap_bytes == 0);
  }

  TEST_CASE("a tag naming no earlier row releases nothing") {
    AllocationTableBuilder b;
    const HeapEvent events[] = {alloc(10, 0x100, 8), release(20, 0x100), release(30, 0x200)};
    const std::uint32_t tags[] = {kNoRow, 7, 1};  // rows 7 and 1 do not exist yet
    b.on_tagged_events(events, tags, 0);
    const AllocationTable t = b.finish();
    CHECK(t.rows() == 1);
    CHECK(t.frees() == 0);
    CHECK(t.free_ns(0) == kNeverFreed);
    CHECK(t.unmatched_free_ns() == std::vector<std::uint64_t>{20, 30});
  }

  TEST_CASE("a dump with more allocations than rows fills the table and is refused") {
    AllocationTableBuilder b(/*max_rows=*/3);
    TableFeed feed(b);
    for (std::uint64_t i = 0; i < 3; ++i) feed(alloc(10 + i, 0x100 + i * 16, 8), 0);
    CHECK_FALSE(b.full());
    feed(release(20, 0x100), 0);
    feed(alloc(21, 0x200, 8), 0);  // the fourth: no row for it
    CHECK(b.full());
    feed(release(22, 0x110), 0);  // nothing after it is taken
    const AllocationTable t = b.finish();
    CHECK(t.rows() == 3);
    CHECK(t.frees() == 1);
  }

  TEST_CASE("past a million rows the per-site index is built in two halves, and is each site's rows") {
    // 1.2 M allocations of stacks 0-6; stacks 5 and 6 belong to no site, 3
    // and 4 to the same one. Built in a spill directory, whose pages the
    // halves ready for writing themselves.
    std::vector<Event> events;
    constexpr std::uint32_t kRows = 1'200'000;
    events.reserve(kRows);
    for (std::uint32_t i = 0; i < kRows; ++i) {
      const std::uint32_t stack = (i * 7919u + i / 1000) % 7;
      events.push_back({alloc(100 + i, 0x1000 + std::uint64_t{i} * 16, 8, stack)});
    }
    std::string dir = std::filesystem::temp_directory_path() / "memrec-table-test-XXXXXX";
    REQUIRE(mkdtemp(dir.data()) != nullptr);
    set_spill_directory(dir);
    AllocationTableBuilder b;
    TableFeed feed(b);
    for (const Event& ev : events) feed(ev.e, ev.thread);
    AllocationTable t = b.finish();
    const std::unordered_map<std::uint32_t, std::uint32_t> site_of_stack{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 3}};
    t.set_sites(site_of_stack, 4);
    set_spill_directory("");
    std::filesystem::remove_all(dir);
    std::vector<std::vector<std::uint32_t>> want(4);
    for (std::uint32_t r = 0; r < kRows; ++r) {
      const std::uint32_t stack = events[r].e.stack.value;
      if (stack < 5) want[site_of_stack.at(stack)].push_back(r);
    }
    REQUIRE(t.sites() == 4);
    for (std::uint32_t site = 0; site < 4; ++site) {
      CAPTURE(site);
      const auto [first, last] = t.site_rows(site);
      CHECK(std::vector<std::uint32_t>(first, last) == want[site]);
      for (const std::uint32_t r : want[site]) REQUIRE(t.site(r) == site);
    }
    for (std::uint32_t r = 0; r < kRows; ++r) {
      if (events[r].e.stack.value >= 5) REQUIRE(t.site(r) == kNoSite);
    }
  }

  TEST_CASE("a table in spill files answers as one in memory") {
    // Frees at their allocation's ns (a coarse clock), from two threads.
    std::vector<Event> events;
    for (std::uint64_t i = 0; i < 50000; ++i) {
      events.push_back(
          {alloc(i / 4, 0x1000 + (i % 512) * 64, 1 + i % 700, 1 + i % 3), static_cast<std::uint32_t>(i % 2)});
      if (i >= 511)
        events.push_back({release(i / 4, 0x1000 + ((i + 1) % 512) * 64), static_cast<std::uint32_t>(i % 2)});
    }
    const AllocationTable in_memory = build(events);
    std::string dir = std::filesystem::temp_directory_path() / "memrec-table-test-XXXXXX";
    REQUIRE(mkdtemp(dir.data()) != nullptr);
    set_spill_directory(dir);
    const AllocationTable spilled = build(events);
    set_spill_directory("");
    std::filesystem::remove_all(dir);
    check_same(spilled, in_memory);
    for (std::uint64_t t = 0; t <= 12500; t += 250) {
      CHECK(cursor_at(spilled, t).heap_bytes == cursor_at(in_memory, t).heap_bytes);
    }
  }
}

// A random table with many equal keys: sizes from a few classes, addresses
// from a pool of `slots` reused as blocks are freed, times that repeat (so
// lifetimes do too), blocks never freed, four sites and three threads.
AllocationTable random_table(std::mt19937_64& rng, std::size_t rows, std::uint64_t slots, std::uint64_t stride,
                             std::uint64_t& end_ns) {
  std::vector<Event> events;
  events.reserve(rows * 2);
  std::vector<std::uint64_t> free_slots;
  for (std::uint64_t i = 0; i < slots; ++i) free_slots.push_back(i);
  std::vector<std::uint64_t> live;
  std::uint64_t time = 100;
  for (std::size_t made = 0; made < rows;) {
    time += rng() % 2;
    const auto thread = static_cast<std::uint32_t>(rng() % 3);
    if (live.empty() || (!free_slots.empty() && rng() % 100 < 52)) {
      const std::size_t k = rng() % free_slots.size();
      const std::uint64_t slot = free_slots[k];
      free_slots[k] = free_slots.back();
      free_slots.pop_back();
      const std::uint64_t sizes[] = {16 + rng() % 3, 4096 * (1 + rng() % 3), 100000 + rng() % 5 * 3000,
                                     1 + rng() % 100000};
      events.push_back(
          {alloc(time, 0x10000000 + slot * stride, sizes[rng() % 4], static_cast<std::uint32_t>(rng() % 4)), thread});
      live.push_back(slot);
      ++made;
    } else if (!free_slots.empty() && rng() % 8 == 0) {
      // A realloc that moves a live block: its release and its allocation, one thread.
      const std::size_t k = rng() % live.size();
      const std::size_t j = rng() % free_slots.size();
      events.push_back({release(time, 0x10000000 + live[k] * stride, true), thread});
      events.push_back({alloc(time, 0x10000000 + free_slots[j] * stride, 1 + rng() % 70000,
                              static_cast<std::uint32_t>(rng() % 4), true),
                        thread});
      std::swap(live[k], free_slots[j]);
      ++made;
    } else {
      const std::size_t k = rng() % live.size();
      events.push_back({release(time, 0x10000000 + live[k] * stride), thread});
      free_slots.push_back(live[k]);
      live[k] = live.back();
      live.pop_back();
    }
  }
  end_ns = time;
  return build(events);
}

RowFilter every_row(const AllocationTable& t) {
  RowFilter f;
  f.hi = static_cast<std::uint32_t>(t.rows());
  return f;
}

// Every filter set at random, each about half the time.
RowFilter random_filter(std::mt19937_64& rng, const AllocationTable& t, std::uint64_t end_ns) {
  RowFilter f;
  const auto rows = static_cast<std::uint32_t>(t.rows());
  f.hi = rows;
  const auto half = [&] { return rng() % 2 == 0; };
  if (half()) {
    f.lo = static_cast<std::uint32_t>(rng() % (rows + 1));
    f.hi = static_cast<std::uint32_t>(f.lo + rng() % (rows - f.lo + 1));
  }
  AllocationFilter& a = f.rows;
  if (rng() % 4 == 0) a.live_after_ns = rng() % (end_ns + 10);
  if (rng() % 4 == 0) a.alive_at_ns = 100 + rng() % end_ns;
  if (half()) a.min_size = rng() % 5000;
  if (half()) a.max_size = rng() % 120000;
  if (rng() % 4 == 0) a.min_life_ns = rng() % 2000;
  if (rng() % 4 == 0) a.max_life_ns = rng() % 20000;
  if (rng() % 4 == 0) a.thread = static_cast<std::uint32_t>(rng() % 3);
  if (rng() % 4 == 0) f.site = static_cast<std::uint32_t>(rng() % 4);
  if (rng() % 4 == 0) {
    a.site_ok.emplace(4);
    for (std::size_t s = 0; s < 4; ++s) (*a.site_ok)[s] = half();
  }
  f.realloc = rng() % 4 == 0;
  return f;
}

// The matches of `f` in the answer's order, by a full sort: the filter as
// docs/api.md words it, ties by row (by time: the row itself).
std::vector<std::uint32_t> sorted_plainly(const AllocationTable& t, const RowFilter& f, RowSort sort, bool desc) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> keyed;
  const AllocationFilter& a = f.rows;
  for (std::uint32_t r = f.lo; r < f.hi; ++r) {
    const std::uint64_t free = t.free_ns(r);
    const bool never = free == kNeverFreed;
    const std::uint64_t life = never ? ~0ull : free - t.alloc_ns(r);
    if (t.size(r) < a.min_size || t.size(r) > a.max_size) continue;
    if (a.live_after_ns && !(never || free > *a.live_after_ns)) continue;
    if (a.alive_at_ns && !(t.alloc_ns(r) <= *a.alive_at_ns && (never || free > *a.alive_at_ns))) continue;
    if (life < a.min_life_ns || life > a.max_life_ns) continue;
    if (a.thread && t.thread(r) != *a.thread) continue;
    if (f.site && t.site(r) != *f.site) continue;
    if (a.site_ok && (t.site(r) == kNoSite || !(*a.site_ok)[t.site(r)])) continue;
    if (f.realloc && !t.realloc_from(r) && !t.realloc_to(r)) continue;
    const std::uint64_t key = sort == RowSort::kSize       ? t.size(r)
                              : sort == RowSort::kLifetime ? life
                              : sort == RowSort::kAddress  ? t.address(r)
                                                           : r;
    keyed.emplace_back(key, r);
  }
  std::sort(keyed.begin(), keyed.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return desc ? a.first > b.first : a.first < b.first;
    return sort == RowSort::kTime && desc ? a.second > b.second : a.second < b.second;
  });
  std::vector<std::uint32_t> out;
  for (const auto& k : keyed) out.push_back(k.second);
  return out;
}

// allocation_page against the plain sort at offsets near the front, deep in, at
// the end and past it.
void check_pages(std::mt19937_64& rng, const AllocationTable& t, const RowFilter& f, int offsets) {
  for (const RowSort sort : {RowSort::kTime, RowSort::kSize, RowSort::kLifetime, RowSort::kAddress}) {
    for (const bool desc : {false, true}) {
      CAPTURE(static_cast<int>(sort));
      CAPTURE(desc);
      const std::vector<std::uint32_t> want = sorted_plainly(t, f, sort, desc);
      const std::uint64_t n = want.size();
      std::vector<std::uint64_t> at = {0, 3, 4000, 4090, 5000, 20000, n, n + 7, n > 50 ? n - 50 : 0};
      for (int i = 0; i < offsets; ++i) at.push_back(rng() % (n + 2));
      for (const std::uint64_t offset : at) {
        const std::uint64_t limit = rng() % 3 == 0 ? 1 + rng() % 1000 : 100;
        CAPTURE(offset);
        CAPTURE(limit);
        const RowPage got = allocation_page(t, f, sort, desc, offset, limit);
        CHECK(got.total == n);
        const auto first = want.begin() + static_cast<std::ptrdiff_t>(std::min(offset, n));
        const auto last = want.begin() + static_cast<std::ptrdiff_t>(std::min(offset + limit, n));
        CHECK(got.rows == std::vector<std::uint32_t>(first, last));
      }
    }
  }
}

TEST_SUITE("analyzer/allocation_queries") {
  TEST_CASE("every page of every sort and filter is the full sort's, ties by row") {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 12; ++round) {
      CAPTURE(round);
      std::uint64_t end_ns = 0;
      const AllocationTable t =
          random_table(rng, 2000 + rng() % 30000, 50 + rng() % 3000, round % 2 == 0 ? 16 : 4096, end_ns);
      for (int k = 0; k < 6; ++k) {
        const RowFilter f = k == 0 ? every_row(t) : random_filter(rng, t, end_ns);
        CAPTURE(k);
        check_pages(rng, t, f, 4);
      }
    }
  }

  TEST_CASE("a million rows: pages from two threads and narrowed key ranges are the full sort's") {
    // Past a million positions the scans split over two threads; buckets of
    // more than 65,536 equal or near keys are narrowed or picked by rank.
    std::mt19937_64 rng(11);
    std::uint64_t end_ns = 0;
    const AllocationTable t = random_table(rng, 1'200'000, 3000, 16, end_ns);
    const RowFilter all = every_row(t);
    check_pages(rng, t, all, 3);
    RowFilter some = all;
    some.rows.min_size = 17;
    some.rows.thread = 1;
    check_pages(rng, t, some, 2);
    RowFilter chains = all;
    chains.realloc = true;
    chains.site = 2;
    check_pages(rng, t, chains, 2);
  }
}

}  // namespace
}  // namespace memrec::analyzer
