// The loader's stack tree: stacks come back as recorded, innermost first,
// while the outer frames they share are stored once.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "load/stack_table.h"

using namespace memrec::analyzer;

namespace {

std::vector<std::uint64_t> ips_of(const StackTable& t, std::uint32_t id) {
  const StackTable::Stack* s = t.find(StackId{id});
  REQUIRE(s != nullptr);
  return t.ips(*s);
}

}  // namespace

TEST_SUITE("analyzer/stack_table") {
  TEST_CASE("gives each stack back innermost first and stores shared callers once") {
    StackTable t;
    const std::uint64_t a[] = {0x30, 0x20, 0x10};  // innermost first
    const std::uint64_t b[] = {0x31, 0x20, 0x10};  // same callers
    const std::uint64_t c[] = {0x40, 0x10};
    t.add(StackId{1}, 1, false, a);
    t.add(StackId{2}, 1, true, b);
    t.add(StackId{3}, 2, false, c);
    CHECK(ips_of(t, 1) == std::vector<std::uint64_t>{0x30, 0x20, 0x10});
    CHECK(ips_of(t, 2) == std::vector<std::uint64_t>{0x31, 0x20, 0x10});
    CHECK(ips_of(t, 3) == std::vector<std::uint64_t>{0x40, 0x10});
    CHECK(t.node_count() == 1 + 5);  // the root, 0x10, 0x20, 0x30, 0x31, 0x40
    CHECK(t.find(StackId{2})->truncated);
    CHECK(t.find(StackId{2})->depth == 3);
    CHECK(t.find(StackId{3})->module_gen == 2);
    CHECK(t.size() == 3);
  }

  TEST_CASE("finds a node again that is not on the previous stack's path") {
    StackTable t;
    const std::uint64_t a[] = {0x30, 0x20, 0x10};
    const std::uint64_t b[] = {0x50, 0x60};
    t.add(StackId{1}, 0, false, a);
    t.add(StackId{2}, 0, false, b);
    t.add(StackId{3}, 0, false, a);
    CHECK(t.find(StackId{3})->leaf == t.find(StackId{1})->leaf);
    CHECK(t.node_count() == 1 + 5);
  }

  TEST_CASE("knows no undefined id, and a stack defined again is the later one") {
    StackTable t;
    const std::uint64_t a[] = {0x30};
    const std::uint64_t b[] = {0x40, 0x50};
    t.add(StackId{1}, 0, false, a);
    CHECK(t.find(StackId{0}) == nullptr);
    CHECK(t.find(StackId{2}) == nullptr);
    t.add(StackId{1}, 3, false, b);
    CHECK(ips_of(t, 1) == std::vector<std::uint64_t>{0x40, 0x50});
    CHECK(t.find(StackId{1})->module_gen == 3);
    CHECK(t.size() == 1);
  }

  TEST_CASE("keeps an id far beyond the others without a table that large") {
    StackTable t;
    const std::uint64_t a[] = {0x30};
    t.add(StackId{4'000'000'000u}, 0, false, a);
    t.add(StackId{1}, 0, false, a);
    CHECK(ips_of(t, 4'000'000'000u) == std::vector<std::uint64_t>{0x30});
    std::vector<std::uint32_t> ids;
    t.for_each([&](StackId id, const StackTable::Stack&) { ids.push_back(id.value); });
    CHECK(ids == std::vector<std::uint32_t>{1, 4'000'000'000u});
  }

  TEST_CASE("takes stacks after seal() and a stack without frames") {
    StackTable t;
    const std::uint64_t a[] = {0x30, 0x20};
    t.add(StackId{1}, 0, false, a);
    t.seal();
    t.add(StackId{2}, 0, false, a);
    t.add(StackId{3}, 0, false, {});
    CHECK(t.find(StackId{2})->leaf == t.find(StackId{1})->leaf);
    CHECK(t.find(StackId{3})->leaf == StackTable::kRoot);
    CHECK(ips_of(t, 3).empty());
    CHECK(t.node_count() == 3);
  }

  TEST_CASE("many random stacks: each comes back whole, and each distinct outer part is one node") {
    // Stacks that re-enter subtrees met long before, repeat whole, or add a
    // new branch deep down; enough nodes that the index grows many times.
    std::mt19937_64 rng(7);
    StackTable t;
    std::vector<std::vector<std::uint64_t>> stacks;  // innermost first
    std::vector<std::uint64_t> ips;
    for (std::uint32_t id = 1; id <= 20'000; ++id) {
      const std::size_t depth = 1 + rng() % 40;
      if (!stacks.empty() && rng() % 4 != 0) {
        // An older stack's outer part, then frames of its own.
        ips = stacks[rng() % stacks.size()];
        const std::size_t keep =
            std::min(ips.size(), depth) - (rng() % 3 == 0 ? 0 : rng() % std::min(ips.size(), depth));
        ips.erase(ips.begin(), ips.end() - static_cast<std::ptrdiff_t>(keep));
      } else {
        ips.clear();
      }
      while (ips.size() < depth) ips.insert(ips.begin(), 0x1000 + rng() % 64);  // few addresses, many nodes
      stacks.push_back(ips);
      t.add(StackId{id}, 0, false, ips);
    }
    std::set<std::vector<std::uint64_t>> outer_parts;  // outermost first
    for (const auto& s : stacks) {
      std::vector<std::uint64_t> part;
      for (std::size_t k = s.size(); k-- > 0;) {
        part.push_back(s[k]);
        outer_parts.insert(part);
      }
    }
    CHECK(t.node_count() == 1 + outer_parts.size());
    CHECK(t.node_count() > 100'000);
    CHECK(t.address_count() == 1 + 64);
    std::map<std::vector<std::uint64_t>, StackTable::Node> leaf_of;
    for (std::uint32_t id = 1; id <= stacks.size(); ++id) {
      CAPTURE(id);
      const StackTable::Stack* s = t.find(StackId{id});
      REQUIRE(s != nullptr);
      CHECK(t.ips(*s) == stacks[id - 1]);
      const auto [it, inserted] = leaf_of.emplace(stacks[id - 1], s->leaf);
      CHECK(it->second == s->leaf);  // equal stacks end at one node
    }
  }
}
