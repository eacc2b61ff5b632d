// The flamegraphs' call tree (reports/flame_tree.h): sites merge by frame
// label from the outermost frame in, whatever the frames' other fields, a
// site's path is found again after other sites, and children come sorted by
// name. Checked against a tree of named maps built the obvious way.
#include "reports/flame_tree.h"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

namespace memrec::analyzer {
namespace {

// The obvious tree: named children in a map, values per slot.
struct Reference {
  std::map<std::string, Reference> children;
  std::array<std::uint64_t, 2> value{};
};

void add(Reference& root, const CallSites& cs, const CallSite& site, std::uint64_t v, std::size_t slot) {
  Reference* at = &root;
  at->value[slot] += v;
  const std::vector<std::uint32_t> frames = site.frames.to_vector();
  for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
    at = &at->children[frame_label(cs.frames[*f])];
    at->value[slot] += v;
  }
}

// Both trees as one text, depth-first, children in the order each gives.
void print(const FlameTree<2>& t, std::uint32_t n, int depth, std::string& out) {
  out += std::string(depth, ' ') + t.name(n) + " " + std::to_string(t.node(n).value[0]) + "/" +
         std::to_string(t.node(n).value[1]) + "\n";
  for (const std::uint32_t c : t.children(n)) print(t, c, depth + 1, out);
}
void print(const Reference& r, const std::string& name, int depth, std::string& out) {
  out += std::string(depth, ' ') + name + " " + std::to_string(r.value[0]) + "/" + std::to_string(r.value[1]) + "\n";
  for (const auto& [child, sub] : r.children) print(sub, child, depth + 1, out);
}

// Sites over a few functions, some frames differing only in line or file
// (one label), some without a function (labelled by module and offset).
// `first`: the function the frame list starts with, so that the two dumps of
// a diff number the same functions differently.
CallSites random_sites(std::mt19937_64& rng, std::size_t count, int first) {
  CallSites cs;
  for (int k = 0; k < 12; ++k) {
    const int i = (first + k) % 12;
    cs.frames.push_back(SiteFrame{"f" + std::to_string(i), "a.c", 10u + i, "/bin/app", 0x100u + i, false});
    cs.frames.push_back(SiteFrame{"f" + std::to_string(i), "b.c", 99, "/bin/app", 0x900u + i, true});
  }
  cs.frames.push_back(SiteFrame{"", "", 0, "/lib/libx.so", 0x2a, false});
  cs.sites.resize(count);
  std::vector<std::uint32_t> frames;
  for (CallSite& s : cs.sites) {
    // Often the previous site's outer part (frames are innermost first).
    if (rng() % 3 != 0)
      frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(rng() % (frames.size() + 1)));
    const std::size_t depth = frames.size() + rng() % 6;
    while (frames.size() < depth) frames.insert(frames.begin(), static_cast<std::uint32_t>(rng() % cs.frames.size()));
    s.frames = SiteFrames(frames);
  }
  return cs;
}

}  // namespace

TEST_SUITE("analyzer/flame_tree") {
  TEST_CASE("merges sites by label from the outermost frame, children sorted by name") {
    CallSites cs;
    cs.frames = {
        SiteFrame{"leaf", "x.c", 1, "/bin/app", 0x10, false}, SiteFrame{"main", "x.c", 9, "/bin/app", 0x20, false},
        SiteFrame{"main", "x.c", 12, "/bin/app", 0x30, false},  // another line: the same label
        SiteFrame{"", "", 0, "/lib/libc.so.6", 0x2a000, false}, SiteFrame{"alpha", "x.c", 3, "/bin/app", 0x40, false}};
    cs.sites.resize(3);
    cs.sites[0].frames = {0, 1};
    cs.sites[1].frames = {4, 2};
    cs.sites[2].frames = {3};
    FlameTree<1> t;
    t.add(cs, cs.sites[0], 5);
    t.add(cs, cs.sites[1], 7);
    t.add(cs, cs.sites[2], 1);
    t.sort_children();
    CHECK(t.node(0).value[0] == 13);
    REQUIRE(t.children(0).size() == 2);
    const std::uint32_t libc = t.children(0)[0];  // "libc.so.6+0x2a000" < "main"
    const std::uint32_t main = t.children(0)[1];
    CHECK(t.name(libc) == "libc.so.6+0x2a000");
    CHECK(t.node(libc).value[0] == 1);
    CHECK(t.name(main) == "main");
    CHECK(t.node(main).value[0] == 12);
    REQUIRE(t.children(main).size() == 2);
    CHECK(t.name(t.children(main)[0]) == "alpha");
    CHECK(t.name(t.children(main)[1]) == "leaf");
    CHECK(t.children(t.children(main)[1]).empty());
  }

  TEST_CASE("random sites of two dumps give the tree the obvious way gives") {
    std::mt19937_64 rng(11);
    const CallSites base = random_sites(rng, 3000, 0);
    const CallSites next = random_sites(rng, 2000, 5);
    FlameTree<2> t;
    Reference r;
    for (const CallSite& s : base.sites) {
      const std::uint64_t v = 1 + rng() % 100;
      t.add(base, s, v, 0);
      add(r, base, s, v, 0);
    }
    for (const CallSite& s : next.sites) {
      const std::uint64_t v = 1 + rng() % 100;
      t.add(next, s, v, 1);
      add(r, next, s, v, 1);
    }
    t.sort_children();
    std::string got;
    std::string want;
    print(t, 0, 0, got);
    print(r, "all", 0, want);
    CHECK(got == want);
    CHECK(got.size() > 10'000);
  }
}

}  // namespace memrec::analyzer
