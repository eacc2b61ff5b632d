// Consecutive stacks mostly share their outer frames, so add() first follows
// the previous stack's path while the addresses agree and only then looks
// nodes up in the index: most frames of most stacks cost one comparison.
#include "load/stack_table.h"

#include <algorithm>

namespace memrec::analyzer {
namespace {

constexpr std::size_t kMinIndexSlots = 1024;

// murmur3's finalizer: every key bit reaches the low bits the mask keeps.
std::size_t mix(std::uint64_t h) {
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return static_cast<std::size_t>(h ^ (h >> 33));
}

bool needs_growth(std::size_t entries, std::size_t slots) { return 4 * entries >= 3 * slots; }

}  // namespace

StackTable::StackTable() { clear(); }

void StackTable::clear() {
  nodes_.assign(1, NodeEntry{});
  addresses_.assign(1, 0);
  node_index_.assign(kMinIndexSlots, kRoot);
  address_index_.assign(kMinIndexSlots, 0);
  last_path_.clear();
  dense_.clear();
  sparse_.clear();
  defined_ = 0;
}

StackTable StackTable::tree() const {
  StackTable t;
  t.seal();
  t.nodes_ = nodes_;
  t.addresses_ = addresses_;
  return t;
}

void StackTable::seal() {
  node_index_ = {};
  address_index_ = {};
  last_path_ = {};
  nodes_.shrink_to_fit();
  addresses_.shrink_to_fit();
  dense_.shrink_to_fit();
}

std::size_t StackTable::node_slot(Node caller, std::uint32_t address) const {
  return mix((static_cast<std::uint64_t>(caller) << 32) | address) & (node_index_.size() - 1);
}

std::size_t StackTable::address_slot(std::uint64_t ip) const { return mix(ip) & (address_index_.size() - 1); }

void StackTable::grow_node_index() {
  std::size_t slots = std::max(kMinIndexSlots, node_index_.size());
  while (needs_growth(nodes_.size(), slots)) slots *= 2;
  node_index_.assign(slots, kRoot);
  for (Node n = 1; n < nodes_.size(); ++n) {
    std::size_t i = node_slot(nodes_[n].caller, nodes_[n].address);
    while (node_index_[i] != kRoot) i = (i + 1) & (slots - 1);
    node_index_[i] = n;
  }
}

void StackTable::grow_address_index() {
  std::size_t slots = std::max(kMinIndexSlots, address_index_.size());
  while (needs_growth(addresses_.size(), slots)) slots *= 2;
  address_index_.assign(slots, 0);
  for (std::uint32_t a = 1; a < addresses_.size(); ++a) {
    std::size_t i = address_slot(addresses_[a]);
    while (address_index_[i] != 0) i = (i + 1) & (slots - 1);
    address_index_[i] = a;
  }
}

std::uint32_t StackTable::address_index(std::uint64_t ip) {
  if (needs_growth(addresses_.size(), address_index_.size())) grow_address_index();
  std::size_t i = address_slot(ip);
  for (; address_index_[i] != 0; i = (i + 1) & (address_index_.size() - 1)) {
    if (addresses_[address_index_[i]] == ip) return address_index_[i];
  }
  const auto a = static_cast<std::uint32_t>(addresses_.size());
  addresses_.push_back(ip);
  address_index_[i] = a;
  return a;
}

StackTable::Node StackTable::child(Node caller, std::uint64_t ip) {
  const std::uint32_t address = address_index(ip);
  if (needs_growth(nodes_.size(), node_index_.size())) grow_node_index();
  std::size_t i = node_slot(caller, address);
  for (; node_index_[i] != kRoot; i = (i + 1) & (node_index_.size() - 1)) {
    const NodeEntry& e = nodes_[node_index_[i]];
    if (e.address == address && e.caller == caller) return node_index_[i];
  }
  const auto n = static_cast<Node>(nodes_.size());
  nodes_.push_back(NodeEntry{address, caller});
  node_index_[i] = n;
  return n;
}

StackTable::Stack& StackTable::entry(StackId id) {
  const std::size_t i = id.value;
  if (i < dense_.size()) return dense_[i];
  if (i < 4 * (defined_ + 1024)) {
    dense_.resize(std::max(i + 1, dense_.size() + dense_.size() / 2));
    return dense_[i];
  }
  return sparse_[id.value];
}

void StackTable::add(StackId id, std::uint64_t module_gen, bool truncated, std::span<const std::uint64_t> ips) {
  if (node_index_.empty()) grow_node_index();  // after seal()
  if (address_index_.empty()) grow_address_index();
  Node node = kRoot;
  const std::size_t depth = ips.size();
  std::size_t k = 0;  // frames from the outermost
  for (; k < depth && k < last_path_.size() && ip(last_path_[k]) == ips[depth - 1 - k]; ++k) node = last_path_[k];
  last_path_.resize(k);
  for (; k < depth; ++k) {
    node = child(node, ips[depth - 1 - k]);
    last_path_.push_back(node);
  }
  Stack& s = entry(id);
  if (!s.defined) ++defined_;
  s = Stack{module_gen, node, static_cast<std::uint32_t>(depth), truncated, true};
}

const StackTable::Stack* StackTable::find(StackId id) const {
  if (id.value < dense_.size()) return dense_[id.value].defined ? &dense_[id.value] : nullptr;
  const auto it = sparse_.find(id.value);
  return it == sparse_.end() ? nullptr : &it->second;
}

std::vector<std::uint64_t> StackTable::ips(const Stack& s) const {
  std::vector<std::uint64_t> out;
  out.reserve(s.depth);
  for_each_ip(s, [&](std::uint64_t ip) { out.push_back(ip); });
  return out;
}

}  // namespace memrec::analyzer
