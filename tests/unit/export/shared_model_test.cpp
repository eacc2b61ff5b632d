// What the exports added to the shared model: StackReplay::live_block (the
// heaptrack export sees which block a free releases) and
// CallSites::site_of_stack (which site each recorded stack went into).
#include <doctest/doctest.h>

#include "model/stack_replay.h"
#include "reports/call_sites.h"
#include "symbolize/symbolizer.h"

using namespace memrec::analyzer;

TEST_SUITE("export/shared_model") {
  TEST_CASE("live_block shows a block until its free is replayed") {
    StackReplay r({});
    r.on_event(HeapEvent{10, 0x1000, 64, StackId{3}, HeapOp::kAlloc}, 0);
    const LiveBlock* b = r.live_block(0x1000);
    REQUIRE(b != nullptr);
    CHECK(b->size == 64);
    CHECK(b->stack.value == 3);
    CHECK(r.live_block(0x2000) == nullptr);
    r.on_event(HeapEvent{11, 0x1000, 0, {}, HeapOp::kFree}, 0);
    CHECK(r.live_block(0x1000) == nullptr);
  }

  TEST_CASE("site_of_stack maps stacks with the same frames to one site") {
    LoadedDump dump;
    // Addresses outside every module: frames keep their address, no symbolizer work.
    const std::uint64_t two_frames[] = {0x500, 0x600};
    const std::uint64_t one_frame[] = {0x700};
    dump.stacks.add(StackId{1}, 0, false, two_frames);
    dump.stacks.add(StackId{2}, 0, false, two_frames);
    dump.stacks.add(StackId{3}, 0, false, one_frame);
    StackColumns columns;
    columns.resize(4);
    columns.allocations = {0, 1, 2, 5};
    Symbolizer symbolizer(SymbolizerOptions{});
    const CallSites sites = build_call_sites(dump, columns, symbolizer);
    REQUIRE(sites.site_of_stack.size() == 3);
    CHECK(sites.site_of_stack.at(1) == sites.site_of_stack.at(2));
    CHECK(sites.site_of_stack.at(1) != sites.site_of_stack.at(3));
    CHECK(sites.sites[sites.site_of_stack.at(1)].allocations == 3);
    CHECK(sites.sites[sites.site_of_stack.at(3)].allocations == 5);
  }
}
