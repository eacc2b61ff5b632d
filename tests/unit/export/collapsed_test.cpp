// The stack-based exports from hand-made call sites: folded lines, the SVG's
// escaping, site matching in the diff.
#include <doctest/doctest.h>

#include <string>

#include "diff/site_diff.h"
#include "export/export_writers.h"

using namespace memrec::analyzer;

namespace {

// main -> work -> leak (innermost first in the sites), plus a site whose
// innermost function has characters that folded and XML files must not keep.
HeapReport two_sites(const std::string& module) {
  HeapReport r;
  r.sites.frames = {{"leak", "a.c", 3, module, 0x10, false},
                    {"work", "a.c", 7, module, 0x20, false},
                    {"main", "a.c", 9, module, 0x30, false},
                    {"f<a&b>;x", "b.cpp", 1, module, 0x40, false}};
  CallSite leak;
  leak.frames = {0, 1, 2};
  leak.leaked_bytes = 300;
  leak.leaked_count = 3;
  leak.allocations = 3;
  leak.allocated_bytes = 300;
  CallSite odd;
  odd.frames = {3, 2};
  odd.allocations = 1;
  odd.allocated_bytes = 7;
  r.sites.sites = {leak, odd};
  return r;
}

}  // namespace

TEST_SUITE("export/collapsed") {
  TEST_CASE("folds each site outermost first with its value, leaving out zeros") {
    const HeapReport r = two_sites("/bin/a");
    CHECK(export_collapsed({&r}, ExportMetric::kLeaked) == "main;work;leak 300\n");
    CHECK(export_collapsed({&r}, ExportMetric::kAllocations) == "main;f<a&b>_x 1\nmain;work;leak 3\n");
  }

  TEST_CASE("the SVG escapes names and holds its script inline") {
    const HeapReport r = two_sites("/bin/a");
    const std::string svg = export_svg({&r}, ExportMetric::kAllocated);
    CHECK(svg.find("f&lt;a&amp;b&gt;;x") != std::string::npos);
    CHECK(svg.find("f<a&b>") == std::string::npos);
    CHECK(svg.find("<![CDATA[") != std::string::npos);
  }

  TEST_CASE("the SVG leaves out frames narrower than a tenth of a pixel, and says how many") {
    HeapReport r;
    r.sites.frames = {{"main", "a.c", 9, "/bin/a", 0x30, false}, {"big", "a.c", 3, "/bin/a", 0x10, false}};
    CallSite big;
    big.frames = {1, 0};
    big.allocated_bytes = 1'000'000;
    r.sites.sites.push_back(big);
    for (std::uint32_t i = 0; i < 10; ++i) {
      r.sites.frames.push_back({"tiny" + std::to_string(i), "a.c", 1, "/bin/a", 0x100 + i, false});
      CallSite tiny;
      tiny.frames = {static_cast<std::uint32_t>(r.sites.frames.size() - 1), 0};
      tiny.allocated_bytes = 83;  // 1,000,830 bytes over 1,200 px: 0.0995 px
      r.sites.sites.push_back(tiny);
    }
    const std::string svg = export_svg({&r}, ExportMetric::kAllocated);
    CHECK(svg.find(">big<") != std::string::npos);
    CHECK(svg.find("tiny") == std::string::npos);
    CHECK(svg.find("10 frames narrower than 0.1 px not drawn") != std::string::npos);
    // Wide enough, they are drawn.
    for (std::size_t i = 1; i < r.sites.sites.size(); ++i) r.sites.sites[i].allocated_bytes = 84;
    const std::string all = export_svg({&r}, ExportMetric::kAllocated);
    CHECK(all.find(">tiny9<") != std::string::npos);
    CHECK(all.find("not drawn") == std::string::npos);
  }

  TEST_CASE("the diff matches sites by function, file name and line, not module, directory or address") {
    const HeapReport base = two_sites("/build1/a");
    HeapReport next = two_sites("/build2/a");
    for (SiteFrame& f : next.sites.frames) {
      f.module_offset += 0x1000;
      f.file = "/another/checkout/" + f.file;  // built elsewhere
    }
    next.sites.sites[0].leaked_bytes = 400;
    next.sites.sites[0].leaked_count = 4;
    const HeapDiff d = diff_reports(base, next);
    REQUIRE(d.sites.size() == 1);
    CHECK(d.sites[0].change == SiteChange::kChanged);
    CHECK(d.frames[d.sites[0].frames[0]].function == "leak");
    CHECK(d.frames[d.sites[0].frames[0]].file == "a.c");  // as BASE has it
    CHECK(change_of(d.sites[0].base.leaked_bytes, d.sites[0].next.leaked_bytes) == 100);
  }
}
