// The comparison behind `memrec diff` and memrec view's diff table
// (diff/site_diff.h), on sides made by hand: what makes a site new, which of
// a side's sites it points to, and which figures make it changed.
#include "diff/site_diff.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace memrec::analyzer;

namespace {

// One site per entry of `functions` (each called from main, at prog.c:20),
// every frame in `module` at its own address; the sites' own figures stay 0:
// a DiffSide carries them.
CallSites sites_of(const std::vector<std::string>& functions, const std::string& module = "/a/prog") {
  CallSites cs;
  cs.frames.push_back(SiteFrame{"main", "prog.c", 1, module, 0x10, false});
  for (const std::string& f : functions) {
    const auto id = static_cast<std::uint32_t>(cs.frames.size());
    cs.frames.push_back(SiteFrame{f, "prog.c", 20, module, 0x100 + id, false});
    cs.sites.push_back(CallSite{});
    cs.sites.back().frames = SiteFrames(std::vector<std::uint32_t>{id, 0});
  }
  return cs;
}

DiffFigures allocated(std::uint64_t bytes, std::uint64_t calls) {
  DiffFigures f;
  f.allocated_bytes = bytes;
  f.allocations = calls;
  return f;
}

DiffSide side(const CallSites& cs, std::vector<DiffFigures> figures) {
  DiffSide s;
  s.sites = &cs;
  s.figures = std::move(figures);
  for (const DiffFigures& f : s.figures) {
    s.totals.allocated_bytes += f.allocated_bytes;
    s.totals.allocations += f.allocations;
  }
  return s;
}

}  // namespace

TEST_SUITE("export/site_diff") {
  TEST_CASE("a site without a figure on one side is new there, as a report without it would make it") {
    // A range's figures list every site of the dump, most of them 0.
    const CallSites cs = sites_of({"early", "late"});
    const HeapDiff d =
        diff_sides(side(cs, {allocated(400, 4), DiffFigures{}}), side(cs, {DiffFigures{}, allocated(900, 1)}));
    REQUIRE(d.sites.size() == 2);
    CHECK(diff_site_label(d, d.sites[0]) == "late");
    CHECK(d.sites[0].change == SiteChange::kNew);
    CHECK_FALSE(d.sites[0].base_site.has_value());
    CHECK(d.sites[0].next_site == 1u);
    CHECK(diff_site_label(d, d.sites[1]) == "early");
    CHECK(d.sites[1].change == SiteChange::kVanished);
    CHECK(d.sites[1].base_site == 0u);
    CHECK_FALSE(d.sites[1].next_site.has_value());
  }

  TEST_CASE("sites of one side that match are summed and shown by the first of them") {
    // Two builds in other directories, the second calling work() from two
    // addresses that symbolize to the same line: the same frames by function, file and line.
    const CallSites base = sites_of({"work"}, "/old/prog");
    const CallSites next = sites_of({"other", "work", "work"}, "/new/prog");
    const HeapDiff d =
        diff_sides(side(base, {allocated(100, 1)}), side(next, {allocated(5, 1), allocated(100, 1), allocated(50, 2)}));
    REQUIRE(d.sites.size() == 2);
    const SiteDiff& work = d.sites[0];
    CHECK(diff_site_label(d, work) == "work");
    CHECK(work.change == SiteChange::kChanged);
    CHECK(work.next == allocated(150, 3));
    CHECK(work.base_site == 0u);
    CHECK(work.next_site == 1u);
  }

  TEST_CASE("temporaries alone change a site") {
    const CallSites cs = sites_of({"scratch"});
    DiffFigures before = allocated(64, 2);
    DiffFigures after = before;
    after.temporary = 2;
    const HeapDiff d = diff_sides(side(cs, {before}), side(cs, {after}));
    REQUIRE(d.sites.size() == 1);
    CHECK(d.sites[0].change == SiteChange::kChanged);
    CHECK(change_of(d.sites[0].base.temporary, d.sites[0].next.temporary) == 2);
  }

  TEST_CASE("a runtime site's retained bytes are no leak") {
    SiteFigures f;
    f.allocations = 1;
    f.leaked_bytes = 4096;
    f.leaked_count = 1;
    CHECK(diff_figures(f, true).leaked_bytes == 0);
    CHECK(diff_figures(f, true).allocations == 1);
    CHECK(diff_figures(f, false).leaked_bytes == 4096);
  }
}
