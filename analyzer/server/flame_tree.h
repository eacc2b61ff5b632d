// The call tree behind the flamegraph endpoints: call sites merged frame by
// frame from the outermost in, by label, with one value per compared dump
// (one for /flame, base and new for /diff/flame).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reports/call_sites.h"

namespace memrec::analyzer {

template <std::size_t kSlots>
struct FlameTree {
  struct Node {
    std::string name;
    std::array<std::uint64_t, kSlots> value{};
    std::map<std::string, std::uint32_t> children;  // by name: a stable, sorted order
  };
  std::vector<Node> nodes{Node{"all", {}, {}}};  // nodes[0] is the root

  // Adds `value` to `slot` of the root and of every frame of `site`.
  void add(const CallSites& sites, const CallSite& site, std::uint64_t value, std::size_t slot = 0) {
    std::uint32_t node = 0;
    nodes[0].value[slot] += value;
    const std::vector<std::uint32_t> frames = site.frames.to_vector();
    for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
      std::string name = frame_label(sites.frames[*f]);
      const auto it = nodes[node].children.find(name);
      std::uint32_t child = 0;
      if (it == nodes[node].children.end()) {
        child = static_cast<std::uint32_t>(nodes.size());
        nodes[node].children.emplace(name, child);
        nodes.push_back(Node{std::move(name), {}, {}});
      } else {
        child = it->second;
      }
      nodes[child].value[slot] += value;
      node = child;
    }
  }
};

}  // namespace memrec::analyzer
