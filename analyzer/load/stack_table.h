// A dump's Stack records as a tree: a stack is the node of its innermost
// frame, each node a return address and the node of its caller, so the outer
// frames most stacks share are kept once (cc1plus: 170,000 stacks of ~61
// frames, 10.4 M addresses in 1.2 M nodes). Filled by the loader, read by the
// reports; a node's id is also what call_sites.cpp memoizes its work on.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

#include "memrec/reader/records.h"

namespace memrec::analyzer {

using reader::StackId;

class StackTable {
 public:
  using Node = std::uint32_t;
  static constexpr Node kRoot = 0;  // the caller of every outermost frame; holds no address

  struct Stack {
    std::uint64_t module_gen = 0;
    Node leaf = kRoot;  // the innermost frame's node; kRoot for a stack without frames
    std::uint32_t depth = 0;
    bool truncated = false;
    bool defined = false;
  };

  StackTable();

  // Defines stack `id` (`ips` innermost first); a later definition of the
  // same id replaces the earlier one, as the loader always did.
  void add(StackId id, std::uint64_t module_gen, bool truncated, std::span<const std::uint64_t> ips);
  // The stack `id`, or nullptr if no record defined it.
  const Stack* find(StackId id) const;
  std::size_t size() const { return defined_; }
  bool empty() const { return defined_ == 0; }
  // Forgets every stack and node.
  void clear();
  // A sealed copy of the nodes and addresses without the stacks: for a
  // reader that walks nodes it noted (call_sites.cpp) after the table is gone.
  StackTable tree() const;
  // Frees the lookup only add() uses; a later add() rebuilds it.
  void seal();

  std::uint64_t ip(Node n) const { return addresses_[nodes_[n].address]; }
  // Distinct return addresses are numbered densely from 1: a node's number
  // lets a reader keep per-address data in a vector.
  std::uint32_t address_of(Node n) const { return nodes_[n].address; }
  std::size_t address_count() const { return addresses_.size(); }
  std::uint64_t ip_of_address(std::uint32_t a) const { return addresses_[a]; }
  Node caller(Node n) const { return nodes_[n].caller; }
  std::size_t node_count() const { return nodes_.size(); }

  // Calls fn(ip) for each frame of `s`, innermost first.
  template <typename Fn>
  void for_each_ip(const Stack& s, Fn&& fn) const {
    for (Node n = s.leaf; n != kRoot; n = nodes_[n].caller) fn(addresses_[nodes_[n].address]);
  }
  std::vector<std::uint64_t> ips(const Stack& s) const;

  // Calls fn(id, stack) for every defined stack, in id order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (std::size_t i = 0; i < dense_.size(); ++i) {
      if (dense_[i].defined) fn(StackId{static_cast<std::uint32_t>(i)}, dense_[i]);
    }
    if (sparse_.empty()) return;
    std::vector<std::uint32_t> ids;
    ids.reserve(sparse_.size());
    for (const auto& [id, s] : sparse_) ids.push_back(id);
    std::sort(ids.begin(), ids.end());
    for (const std::uint32_t id : ids) fn(StackId{id}, sparse_.at(id));
  }

 private:
  // A node names its address by index: programs return to far fewer
  // addresses than they have stack nodes (cc1plus: 8,000 for 1.2 M).
  struct NodeEntry {
    std::uint32_t address = 0;  // into addresses_
    Node caller = kRoot;
  };

  Node find_child(Node caller, std::uint32_t address) const;
  Node append_child(Node caller, std::uint32_t address);
  std::uint32_t address_index(std::uint64_t ip);
  std::uint64_t node_hash(Node caller, std::uint32_t address) const;
  std::size_t address_slot(std::uint64_t ip) const;
  void grow_node_index(std::size_t nodes);
  void grow_address_index();
  Stack& entry(StackId id);

  std::vector<NodeEntry> nodes_;
  std::vector<std::uint64_t> addresses_;
  // Open addressing, linear probing, at most 3/4 full; 0 is the empty slot
  // (the root is nobody's child; address 0 is kept at index 0 and never
  // looked up there).
  // (caller, address) -> node. A slot's bits below log2(its slot count)
  // are the node, those above (`tag_mask_`) bits of the key's hash, so a
  // probe passes other keys without reading their nodes. There are more
  // slots than nodes, so the tag costs no memory.
  std::vector<std::uint32_t> node_index_;
  std::uint32_t tag_mask_ = 0;
  std::vector<std::uint32_t> address_index_;  // ip -> index into addresses_
  std::vector<Node> last_path_;               // the previous add()'s nodes, outermost first
  std::vector<std::uint64_t> last_ips_;       // and their addresses, read without a node's
  std::vector<std::uint32_t> new_addresses_;  // add()'s frames below the nodes it found
  // Ids are dense from 1 (FORMAT.md "Stack"); one far beyond them is hostile
  // input and goes to `sparse_` instead of growing `dense_` to gigabytes.
  std::vector<Stack> dense_;
  std::unordered_map<std::uint32_t, Stack> sparse_;
  std::size_t defined_ = 0;
};

}  // namespace memrec::analyzer
