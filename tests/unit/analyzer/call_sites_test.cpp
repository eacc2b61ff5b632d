// Call sites built from the stack tree: their frames are views of a stack,
// innermost first, and read the same as a list made by hand.
#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <vector>

#include "reports/call_sites.h"
#include "symbolize/symbolizer.h"

using namespace memrec::analyzer;

namespace {

// Addresses outside every module: each is a frame of its own, no symbolizer work.
CallSites sites_of(const std::vector<std::vector<std::uint64_t>>& stacks) {
  LoadedDump dump;
  StackColumns columns;
  columns.resize(stacks.size() + 1);
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    dump.stacks.add(StackId{static_cast<std::uint32_t>(i + 1)}, 0, false, stacks[i]);
    columns.allocations[i + 1] = 1;
  }
  Symbolizer symbolizer(SymbolizerOptions{});
  return build_call_sites(dump, columns, symbolizer);
}

std::vector<std::uint64_t> offsets(const CallSites& cs, const SiteFrames& frames) {
  std::vector<std::uint64_t> out;
  for (const std::uint32_t f : frames) out.push_back(cs.frames[f].module_offset);
  return out;
}

}  // namespace

TEST_SUITE("analyzer/call_sites") {
  TEST_CASE("lists a site's frames innermost first, as its stack was recorded") {
    const CallSites cs = sites_of({{0x30, 0x20, 0x10}, {0x31, 0x20, 0x10}, {0x10}});
    REQUIRE(cs.sites.size() == 3);
    CHECK(offsets(cs, cs.sites[0].frames) == std::vector<std::uint64_t>{0x30, 0x20, 0x10});
    CHECK(offsets(cs, cs.sites[1].frames) == std::vector<std::uint64_t>{0x31, 0x20, 0x10});
    CHECK(offsets(cs, cs.sites[2].frames) == std::vector<std::uint64_t>{0x10});
    CHECK(cs.sites[0].frames.size() == 3);
    CHECK(cs.sites[0].frames[2] == cs.sites[2].frames[0]);
    CHECK(cs.sites[1].frames.to_vector().size() == 3);
  }

  TEST_CASE("merges stacks with the same frames, also outside the previous stack's path") {
    const CallSites cs = sites_of({{0x30, 0x20}, {0x40}, {0x30, 0x20}});
    REQUIRE(cs.sites.size() == 2);
    CHECK(cs.sites[0].allocations == 2);
    CHECK(cs.sites[0].stack_ids == 2);
    CHECK(cs.site_of_stack.at(1) == cs.site_of_stack.at(3));
  }

  TEST_CASE("a recursive stack's frames: a position is not equal to the same address at another depth") {
    const CallSites cs = sites_of({{0x10, 0x20, 0x10, 0x20, 0x30}});
    const SiteFrames& frames = cs.sites[0].frames;
    auto first = frames.begin();
    auto third = frames.begin();
    std::advance(third, 2);
    CHECK(*first == *third);  // the same frame, two nodes apart
    CHECK(first != third);
    CHECK(std::distance(frames.begin(), frames.end()) == 5);
    // vector::assign into a smaller vector advances a copy and copies up to it.
    std::vector<std::uint32_t> into{7, 7, 7};
    into.assign(frames.begin(), frames.end());
    CHECK(into == frames.to_vector());
    CHECK(offsets(cs, frames) == std::vector<std::uint64_t>{0x10, 0x20, 0x10, 0x20, 0x30});
  }

  TEST_CASE("reads a list made by hand like a view of a stack") {
    const CallSites cs = sites_of({{0x30, 0x20, 0x10}});
    const SiteFrames by_hand = SiteFrames(cs.sites[0].frames.to_vector());
    CHECK(by_hand == cs.sites[0].frames);
    CHECK(by_hand.size() == 3);
    CHECK(SiteFrames{} == SiteFrames(std::vector<std::uint32_t>{}));
    CHECK(SiteFrames{}.begin() == SiteFrames{}.end());
    const SiteFrames listed = {7, 8};
    CHECK(listed.to_vector() == std::vector<std::uint32_t>{7, 8});
    CHECK_FALSE(listed == by_hand);
  }
}
