// The call tree behind the flamegraphs: call sites merged frame by frame from
// the outermost in, by label, with one value per compared dump (one for the
// view's /flame and the SVG export, base and new for /diff/flame).
//
// A node is a label id and its parent's node, found in an index by the two:
// no string per node. With a string and a map of named children per node,
// cc1plus's 155,000 sites of ~60 frames took 1.3 s and 400 MB per flamegraph.
// Sites come in stack order, and a site mostly shares its outer frames with
// the one before, so add() follows the previous site's path first.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "reports/call_sites.h"

namespace memrec::analyzer {

template <std::size_t kSlots>
class FlameTree {
 public:
  struct Node {
    std::uint32_t parent = 0;
    std::uint32_t label = 0;  // into labels_; 0 is the root's "all"
    std::array<std::uint64_t, kSlots> value{};
  };

  // `inverted`: the tree bottom-up, each path from the site's label frame
  // (the allocating function) out to its callers, as a bottom-up call tree
  // or an inverted flamegraph shows it.
  explicit FlameTree(std::string root = "all", bool inverted = false)
      : nodes_(1), labels_{std::move(root)}, index_(1024, 0), inverted_(inverted) {}

  // Adds `value` to `slot` of the root and of every frame of `site` from its
  // label frame out (site_label.h), a site
  // of `sites`, under a frame named `outer` when that is not empty (the
  // process of each dump in an export of several). Sites of one CallSites
  // are added together, before another's.
  void add(const CallSites& sites, const CallSite& site, std::uint64_t value, std::size_t slot = 0,
           const std::string& outer = {}) {
    if (&sites != labelled_) {
      labelled_ = &sites;
      label_of_frame_.assign(sites.frames.size(), 0);
    }
    path_labels_.clear();
    // Leaves are the sites' label frames: the library frames folded under
    // them are left out, as pprof leaves out Go's allocator (none with raw_frames).
    std::uint32_t at = 0;
    for (const std::uint32_t f : site.frames) {
      if (at++ >= site.label_frame) path_labels_.push_back(label(sites, f));
    }
    if (!outer.empty()) path_labels_.push_back(intern(outer));
    if (!inverted_) std::reverse(path_labels_.begin(), path_labels_.end());  // outermost first
    std::size_t k = 0;
    const std::size_t shared = std::min(path_labels_.size(), last_labels_.size());
    while (k < shared && last_labels_[k] == path_labels_[k]) ++k;
    last_labels_.assign(path_labels_.begin(), path_labels_.end());
    last_nodes_.resize(k);
    std::uint32_t node = k == 0 ? 0 : last_nodes_[k - 1];
    for (; k < path_labels_.size(); ++k) {
      node = child(node, path_labels_[k]);
      last_nodes_.push_back(node);
    }
    nodes_[0].value[slot] += value;
    for (const std::uint32_t n : last_nodes_) nodes_[n].value[slot] += value;
  }

  const Node& node(std::uint32_t n) const { return nodes_[n]; }
  const std::string& name(std::uint32_t n) const { return labels_[nodes_[n].label]; }

  // Each node's children in the order of their names; call after the adds.
  void sort_children() {
    std::vector<std::uint32_t> by_name(labels_.size());
    for (std::uint32_t i = 0; i < by_name.size(); ++i) by_name[i] = i;
    std::sort(by_name.begin(), by_name.end(),
              [&](std::uint32_t a, std::uint32_t b) { return labels_[a] < labels_[b]; });
    std::vector<std::uint32_t> rank(labels_.size());
    for (std::uint32_t r = 0; r < by_name.size(); ++r) rank[by_name[r]] = r;
    first_child_.assign(nodes_.size() + 1, 0);
    for (std::uint32_t n = 1; n < nodes_.size(); ++n) ++first_child_[nodes_[n].parent + 1];
    for (std::size_t n = 0; n < nodes_.size(); ++n) first_child_[n + 1] += first_child_[n];
    children_.assign(nodes_.size() - 1, 0);
    std::vector<std::uint32_t> next(first_child_.begin(), first_child_.end() - 1);
    for (std::uint32_t n = 1; n < nodes_.size(); ++n) children_[next[nodes_[n].parent]++] = n;
    for (std::size_t n = 0; n < nodes_.size(); ++n) {
      std::sort(children_.begin() + first_child_[n], children_.begin() + first_child_[n + 1],
                [&](std::uint32_t a, std::uint32_t b) { return rank[nodes_[a].label] < rank[nodes_[b].label]; });
    }
  }
  std::span<const std::uint32_t> children(std::uint32_t n) const {
    return std::span(children_).subspan(first_child_[n], first_child_[n + 1] - first_child_[n]);
  }

 private:
  // Frames with equal labels merge, across the dumps of a diff too.
  std::uint32_t label(const CallSites& sites, std::uint32_t f) {
    std::uint32_t& id = label_of_frame_[f];
    if (id == 0) id = intern(frame_label(sites.frames[f]));
    return id;
  }
  std::uint32_t intern(const std::string& name) {
    const auto [it, inserted] = label_ids_.try_emplace(name, 0);
    if (inserted) {
      it->second = static_cast<std::uint32_t>(labels_.size());
      labels_.push_back(name);
    }
    return it->second;
  }

  static std::size_t hash(std::uint32_t parent, std::uint32_t label) {
    std::uint64_t h = (static_cast<std::uint64_t>(parent) << 32 | label) * 0x9e3779b97f4a7c15ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }

  // Open addressing, linear probing, at most half full; 0 is the empty slot
  // (the root is nobody's child).
  std::uint32_t child(std::uint32_t parent, std::uint32_t label) {
    if (2 * nodes_.size() >= index_.size()) grow();
    const std::size_t mask = index_.size() - 1;
    std::size_t i = hash(parent, label) & mask;
    for (; index_[i] != 0; i = (i + 1) & mask) {
      const Node& n = nodes_[index_[i]];
      if (n.parent == parent && n.label == label) return index_[i];
    }
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{parent, label, {}});
    index_[i] = id;
    return id;
  }

  void grow() {
    index_.assign(2 * index_.size(), 0);
    const std::size_t mask = index_.size() - 1;
    for (std::uint32_t id = 1; id < nodes_.size(); ++id) {
      std::size_t i = hash(nodes_[id].parent, nodes_[id].label) & mask;
      while (index_[i] != 0) i = (i + 1) & mask;
      index_[i] = id;
    }
  }

  std::vector<Node> nodes_;
  std::vector<std::string> labels_;
  std::unordered_map<std::string, std::uint32_t> label_ids_;
  const CallSites* labelled_ = nullptr;
  std::vector<std::uint32_t> label_of_frame_;  // by frame of *labelled_: its label, 0 until needed
  std::vector<std::uint32_t> index_;           // (parent, label) -> node
  std::vector<std::uint32_t> path_labels_;     // scratch: add()'s labels, outermost first
  std::vector<std::uint32_t> last_labels_;     // the previous add()'s labels and nodes, outermost first
  std::vector<std::uint32_t> last_nodes_;
  std::vector<std::uint32_t> first_child_;  // sort_children(): by node, where its children begin in children_
  std::vector<std::uint32_t> children_;
  bool inverted_ = false;
};

}  // namespace memrec::analyzer
