// A growing allocation table (a followed dump's) published after any prefix
// of the events is the table built once of that prefix: every row, index and
// range answer, also for sites of several stacks, realloc chains, replaced
// blocks, checkpoint and time blocks cut in the middle.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <unordered_map>
#include <vector>

#include "model/allocation_table.h"
#include "model/stack_replay.h"
#include "model/window_figures.h"
#include "table_compare.h"

namespace memrec::analyzer {
namespace {

struct Event {
  HeapEvent e;
  std::uint32_t thread = 0;
};

// Stacks 0..5 in three sites, stack 0 alone, 1-2 and 3-5 together; stack 6 in none.
const std::unordered_map<std::uint32_t, std::uint32_t> kSiteOfStack = {{0, 0}, {1, 1}, {2, 1}, {3, 2}, {4, 2}, {5, 2}};
constexpr std::uint32_t kSites = 3;

// Events [from, to) in runs of one thread, through the replay, to the builder.
void feed(const std::vector<Event>& events, std::size_t from, std::size_t to, StackReplay& replay,
          AllocationTableBuilder& builder) {
  std::vector<HeapEvent> run;
  std::vector<std::uint32_t> tags;
  for (std::size_t i = from; i < to;) {
    run.clear();
    const std::uint32_t thread = events[i].thread;
    for (; i < to && events[i].thread == thread; ++i) run.push_back(events[i].e);
    tags.assign(run.size(), 0);
    replay.on_events(run, thread, tags);
    builder.on_tagged_events(run, tags, thread);
  }
}

AllocationTable built_once(const std::vector<Event>& events, std::size_t n) {
  AllocationTableBuilder builder;
  StackReplay replay(TimeWindow{});
  feed(events, 0, n, replay, builder);
  AllocationTable t = builder.finish();
  t.set_sites(kSiteOfStack, kSites);
  return t;
}

std::vector<Event> random_events(std::mt19937_64& rng, std::uint64_t& time) {
  std::vector<Event> events;
  std::vector<std::uint64_t> live;
  const auto stack = [&] { return static_cast<std::uint32_t>(rng() % 7); };
  const int n = 500 + static_cast<int>(rng() % 4000);
  for (int i = 0; i < n; ++i) {
    // Now and then a gap of more than 2^32 ns: a time block turns wide.
    time += rng() % 200 == 0 ? (1ull << 32) + rng() % 1000 : rng() % 3;
    const auto thread = static_cast<std::uint32_t>(rng() % 3);
    const std::uint64_t r = rng() % 100;
    if (r < 45 || live.empty()) {
      const std::uint64_t addr = (r < 3 && !live.empty()) ? live[rng() % live.size()] : 0x1000 + rng() % 5000 * 16;
      events.push_back({HeapEvent{time, addr, 1 + rng() % 500, StackId{stack()}, HeapOp::kAlloc, false}, thread});
      live.push_back(addr);
    } else if (r < 88) {
      const std::size_t k = rng() % live.size();
      events.push_back({HeapEvent{time, live[k], 0, {}, HeapOp::kFree, false}, thread});
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (r < 96) {
      // A realloc of a block made long ago or just now.
      const std::size_t k = rng() % 2 == 0 ? live.size() - 1 : rng() % live.size();
      events.push_back({HeapEvent{time, live[k], 0, {}, HeapOp::kFree, true}, thread});
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(k));
      const std::uint64_t addr = 0x1000 + rng() % 5000 * 16;
      events.push_back({HeapEvent{time, addr, 1 + rng() % 500, StackId{stack()}, HeapOp::kAlloc, true}, thread});
      live.push_back(addr);
    } else if (r < 98) {
      events.push_back({HeapEvent{time, 0xdead0000 + rng() % 7, 0, {}, HeapOp::kFree, false}, thread});
    } else {
      events.push_back(
          {HeapEvent{time, 0x7000000 + rng() % 64 * 4096, 4096, StackId{stack()}, HeapOp::kMmap, false}, thread});
    }
  }
  return events;
}

void check_same_windows(const AllocationTable& a, const AllocationTable& b, std::uint64_t end, std::mt19937_64& rng) {
  for (int w = 0; w < 8; ++w) {
    std::uint64_t from = 100 + rng() % (end - 90);
    std::uint64_t to = 100 + rng() % (end - 90);
    if (from > to) std::swap(from, to);
    if (w == 0) from = 0, to = ~0ull;
    CAPTURE(from);
    CAPTURE(to);
    const WindowFigures x = window_figures(a, TimeWindow{from, to});
    const WindowFigures y = window_figures(b, TimeWindow{from, to});
    CHECK(x.totals.allocations == y.totals.allocations);
    CHECK(x.totals.frees == y.totals.frees);
    CHECK(x.totals.peak_bytes == y.totals.peak_bytes);
    CHECK(x.totals.peak_time_ns == y.totals.peak_time_ns);
    CHECK(x.totals.leaked_bytes == y.totals.leaked_bytes);
    CHECK(x.totals.temporary == y.totals.temporary);
    REQUIRE(x.sites.size() == y.sites.size());
    for (std::size_t s = 0; s < x.sites.size(); ++s) {
      CAPTURE(s);
      CHECK(x.sites[s].allocated_bytes == y.sites[s].allocated_bytes);
      CHECK(x.sites[s].leaked_bytes == y.sites[s].leaked_bytes);
      CHECK(x.sites[s].peak_bytes == y.sites[s].peak_bytes);
      CHECK(x.sites[s].temporary == y.sites[s].temporary);
    }
    const SiteLive lx = live_by_site(a, cursor_at(a, to));
    const SiteLive ly = live_by_site(b, cursor_at(b, to));
    CHECK(lx.bytes == ly.bytes);
    CHECK(lx.count == ly.count);
  }
}

}  // namespace

TEST_SUITE("analyzer/growing_table") {
  TEST_CASE("a growing table published after any prefix of events is the table built once of that prefix") {
    std::mt19937_64 rng(35);
    for (int round = 0; round < 12; ++round) {
      CAPTURE(round);
      std::uint64_t time = 100;
      const std::vector<Event> events = random_events(rng, time);
      AllocationTableBuilder growing(AllocationTableBuilder::Growing{});
      StackReplay replay(TimeWindow{});
      std::size_t done = 0;
      int published = 0;
      while (done < events.size()) {
        // Cuts of a few events and of thousands, across checkpoint and time blocks.
        const std::size_t step = rng() % 4 == 0 ? 1 + rng() % 3 : 1 + rng() % 1500;
        const std::size_t next = std::min(events.size(), done + step);
        feed(events, done, next, replay, growing);
        done = next;
        AllocationTable& t = growing.publish();
        t.set_sites(kSiteOfStack, kSites);
        ++published;
        CAPTURE(done);
        const AllocationTable once = built_once(events, done);
        check_same(t, once);
        check_same_windows(t, once, events[done - 1].e.time_ns + 1, rng);
      }
      CHECK(published > 1);
    }
  }

  TEST_CASE("publishing twice without new events changes nothing") {
    std::mt19937_64 rng(36);
    std::uint64_t time = 100;
    const std::vector<Event> events = random_events(rng, time);
    AllocationTableBuilder growing(AllocationTableBuilder::Growing{});
    StackReplay replay(TimeWindow{});
    feed(events, 0, 1024, replay, growing);  // a checkpoint block's end exactly
    growing.publish().set_sites(kSiteOfStack, kSites);
    AllocationTable& t = growing.publish();
    t.set_sites(kSiteOfStack, kSites);
    check_same(t, built_once(events, 1024));
  }
}

}  // namespace memrec::analyzer
