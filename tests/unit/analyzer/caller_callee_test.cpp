// Caller/callee figures (reports/caller_callee.h): self is the label frame's,
// inclusive counts a site once per function however often recursion repeats
// it, callers and callees of the selected function likewise; frames folded
// under the label (library code) are no function of the graph.
#include "reports/caller_callee.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace memrec::analyzer {
namespace {

// Frames 0..n-1 named by `names`; a site per path (names innermost first).
struct Graph {
  CallSites cs;
  explicit Graph(const std::vector<std::string>& names) {
    std::uint32_t line = 1;
    for (const std::string& n : names)
      cs.frames.push_back(SiteFrame{n, "a.c", line++, "/bin/app", 0x100u + line, false});
  }
  std::uint32_t id(const std::string& name) const {
    for (std::uint32_t i = 0; i < cs.frames.size(); ++i) {
      if (cs.frames[i].function == name) return i;
    }
    FAIL("no frame " << name);
    return 0;
  }
  void site(const std::vector<std::string>& path, std::uint32_t label_frame = 0) {
    std::vector<std::uint32_t> ids;
    for (const std::string& n : path) ids.push_back(id(n));
    CallSite s;
    s.frames = SiteFrames(ids);
    s.label_frame = label_frame;
    cs.sites.push_back(std::move(s));
  }
};

std::uint32_t label_of(const CallerCallee& g, const std::string& name) {
  for (std::uint32_t l = 0; l < g.size(); ++l) {
    if (g.name(l) == name) return l;
  }
  FAIL("no function " << name);
  return 0;
}

std::string links(const CallerCallee& g, const std::vector<CallerCallee::Link>& ls) {
  std::string out;
  for (const auto& l : ls) out += g.name(l.label) + "=" + std::to_string(l.value) + "/" + std::to_string(l.sites) + " ";
  return out;
}

TEST_SUITE("analyzer/caller_callee") {
  TEST_CASE("self is the label frame's and inclusive counts each site once under recursion") {
    Graph g({"malloc", "alloc", "a", "b", "rec", "main"});
    g.site({"malloc", "alloc", "a", "main"}, 1);                  // 3000
    g.site({"malloc", "alloc", "b", "main"}, 1);                  // 1000
    g.site({"malloc", "alloc", "rec", "rec", "rec", "main"}, 1);  // 700
    g.site({"malloc", "rec", "rec", "main"}, 1);                  // 64
    const std::vector<std::uint64_t> values = {3000, 1000, 700, 64};
    CallerCallee cc("rec");
    for (std::size_t i = 0; i < values.size(); ++i) cc.add(g.cs, g.cs.sites[i], values[i]);

    const auto& alloc = cc.function(label_of(cc, "alloc"));
    CHECK(alloc.self == 4700);
    CHECK(alloc.inclusive == 4700);
    CHECK(alloc.self_sites == 3);
    const auto& rec = cc.function(label_of(cc, "rec"));
    CHECK(rec.self == 64);
    CHECK(rec.inclusive == 764);
    CHECK(rec.inclusive_sites == 2);
    const auto& main = cc.function(label_of(cc, "main"));
    CHECK(main.self == 0);
    CHECK(main.inclusive == 4764);
    // The folded allocator frame is below every label: no function here.
    for (std::uint32_t l = 0; l < cc.size(); ++l) CHECK(cc.name(l) != "malloc");

    REQUIRE(cc.selected().has_value());
    CHECK(cc.name(*cc.selected()) == "rec");
    CHECK(links(cc, cc.callers()) == "main=764/2 rec=764/2 ");
    CHECK(links(cc, cc.callees()) == "rec=764/2 alloc=700/1 ");
  }

  TEST_CASE("callers and callees are ranked by value, ties by name") {
    Graph g({"alloc", "a", "b", "c", "main"});
    g.site({"alloc", "a", "main"});
    g.site({"alloc", "c", "main"});
    g.site({"alloc", "b", "main"});
    CallerCallee cc("alloc");
    cc.add(g.cs, g.cs.sites[0], 5);
    cc.add(g.cs, g.cs.sites[1], 9);
    cc.add(g.cs, g.cs.sites[2], 5);
    CHECK(links(cc, cc.callers()) == "c=9/1 a=5/1 b=5/1 ");
    CHECK(cc.callees().empty());
  }

  TEST_CASE("a function is selected by its name's key as by its name") {
    CHECK(name_key("a") == 0xaf63dc4c8601ec8cull);  // FNV-1a's published vectors
    CHECK(name_key("foobar") == 0x85944171f73967e8ull);
    Graph g({"alloc", "a", "main"});
    g.site({"alloc", "a", "main"});
    CallerCallee cc({}, name_key("a"));
    cc.add(g.cs, g.cs.sites[0], 7);
    REQUIRE(cc.selected().has_value());
    CHECK(cc.name(*cc.selected()) == "a");
    CHECK(links(cc, cc.callers()) == "main=7/1 ");
    CHECK(links(cc, cc.callees()) == "alloc=7/1 ");
  }

  TEST_CASE("a function no site reaches is not selected") {
    Graph g({"alloc", "main"});
    g.site({"alloc", "main"});
    CallerCallee cc("missing");
    cc.add(g.cs, g.cs.sites[0], 1);
    CHECK_FALSE(cc.selected().has_value());
    CHECK(cc.callers().empty());
  }
}

}  // namespace
}  // namespace memrec::analyzer
