// The per-stack replay: peak snapshot by stack, leaks, temporaries per
// thread, and the time window.
#include <doctest/doctest.h>

#include "model/stack_replay.h"

using namespace memrec::analyzer;

namespace {

HeapEvent alloc(std::uint64_t t, std::uint64_t addr, std::uint64_t size, std::uint32_t stack) {
  return HeapEvent{t, addr, size, StackId{stack}, HeapOp::kAlloc};
}
HeapEvent release(std::uint64_t t, std::uint64_t addr) { return HeapEvent{t, addr, 0, {}, HeapOp::kFree}; }

}  // namespace

TEST_SUITE("analyzer/stack_replay") {
  TEST_CASE("keeps each stack's bytes as they were at the peak") {
    StackReplay r({});
    r.on_event(alloc(1, 0x10, 100, 1), 0);
    r.on_event(alloc(2, 0x20, 300, 2), 0);  // peak: 400 = 100 (1) + 300 (2)
    r.on_event(release(3, 0x20), 0);
    r.on_event(alloc(4, 0x30, 50, 1), 0);  // 150: below the peak
    r.finish();
    CHECK(r.totals().peak_bytes == 400);
    CHECK(r.totals().peak_time_ns == 2);
    CHECK(r.columns().peak_bytes[1] == 100);
    CHECK(r.columns().peak_bytes[2] == 300);
    CHECK(r.columns().leaked_bytes[1] == 150);
    CHECK(r.columns().leaked_count[1] == 2);
    CHECK(r.columns().leaked_bytes[2] == 0);
  }

  TEST_CASE("counts a block freed before its thread allocates again as temporary") {
    StackReplay r({});
    r.on_event(alloc(1, 0x10, 8, 1), 0);
    r.on_event(alloc(2, 0x20, 8, 2), 1);  // another thread's allocation does not count
    r.on_event(release(3, 0x10), 0);      // temporary
    r.on_event(alloc(4, 0x30, 8, 1), 0);
    r.on_event(alloc(5, 0x40, 8, 1), 0);
    r.on_event(release(6, 0x30), 0);  // not: 0x40 came in between
    r.finish();
    CHECK(r.totals().temporary == 1);
    CHECK(r.columns().temporary[1] == 1);
  }

  TEST_CASE("a window counts only its events and leaks only what it allocated") {
    StackReplay r(TimeWindow{10, 20});
    r.on_event(alloc(5, 0x10, 1000, 1), 0);  // before: live, not counted
    r.on_event(alloc(12, 0x20, 10, 2), 0);   // in: the peak is 1010
    r.on_event(release(15, 0x10), 0);
    r.on_event(alloc(25, 0x30, 5000, 3), 0);  // after: ignored
    r.finish();
    CHECK(r.totals().allocations == 1);
    CHECK(r.totals().frees == 1);
    CHECK(r.totals().peak_bytes == 1010);
    CHECK(r.totals().leaked_bytes == 10);
    CHECK(r.columns().peak_bytes[1] == 1000);
    CHECK(r.columns().allocations[1] == 0);
  }

  TEST_CASE("a free of an unknown block is counted, not an error") {
    StackReplay r({});
    r.on_event(release(1, 0x99), 0);
    r.finish();
    CHECK(r.totals().unmatched_frees == 1);
    CHECK(r.totals().peak_bytes == 0);
  }

  TEST_CASE("a selection counts its allocations alone, peak and totals included") {
    // Allocations 0 and 2 are selected; 1 (stack 2, 1000 bytes) is not.
    const std::vector<bool> selected{true, false, true};
    StackReplay r({}, &selected);
    r.on_event(alloc(1, 0x10, 100, 1), 0);
    r.on_event(alloc(2, 0x20, 1000, 2), 0);  // without the selection, the peak: 1100
    r.on_event(release(3, 0x20), 0);         // its free changes nothing either
    r.on_event(alloc(4, 0x30, 30, 1), 0);    // the selection's peak: 130
    r.on_event(release(5, 0x99), 0);         // frees no selected block: not counted
    r.finish();
    CHECK(r.totals().allocations == 2);
    CHECK(r.totals().allocated_bytes == 130);
    CHECK(r.totals().frees == 0);
    CHECK(r.totals().unmatched_frees == 0);
    CHECK(r.totals().peak_bytes == 130);
    CHECK(r.totals().peak_time_ns == 4);
    CHECK(r.totals().leaked_bytes == 130);
    CHECK(r.totals().leaked_count == 2);
    CHECK(r.columns().peak_bytes[1] == 130);
    CHECK(r.columns().allocations[2] == 0);
    CHECK(r.live_bytes() == 130);
    CHECK(r.live_count() == 2);
  }

  TEST_CASE("an unselected allocation still ends its thread's run of temporaries") {
    const std::vector<bool> selected{true, false};
    StackReplay r({}, &selected);
    r.on_event(alloc(1, 0x10, 8, 1), 0);
    r.on_event(alloc(2, 0x20, 8, 2), 0);  // not selected, but the thread allocated again
    r.on_event(release(3, 0x10), 0);      // so 0x10 is not temporary, as without a selection
    r.finish();
    CHECK(r.totals().frees == 1);
    CHECK(r.totals().temporary == 0);
  }

  TEST_CASE("a selected block allocated over an unselected live one replaces nothing") {
    const std::vector<bool> selected{false, true};
    StackReplay r({}, &selected);
    r.on_event(alloc(1, 0x10, 500, 2), 0);
    r.on_event(alloc(2, 0x10, 40, 1), 0);  // the first block's free was not recorded
    r.finish();
    CHECK(r.totals().replaced_blocks == 0);
    CHECK(r.totals().peak_bytes == 40);
    CHECK(r.columns().leaked_bytes[1] == 40);
  }
}
