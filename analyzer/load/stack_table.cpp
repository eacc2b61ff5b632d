// Consecutive stacks mostly share their outer frames, so add() first follows
// the previous stack's path while the addresses agree and only then looks
// nodes up in the index: most frames of most stacks cost one comparison.
// Below the first frame not found, every frame is a new node, which needs a
// slot in the index and no search (cc1plus: 1.2 M of its 2.3 M frames off
// the previous stack's path).
#include "load/stack_table.h"

#include <algorithm>
#include <bit>

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
  node_index_.clear();
  grow_node_index(0);
  address_index_.assign(kMinIndexSlots, 0);
  last_path_.clear();
  last_ips_.clear();
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
  // New empty vectors, not `= {}`: that assigns an empty list and keeps the room.
  node_index_ = std::vector<std::uint32_t>();
  address_index_ = std::vector<std::uint32_t>();
  last_path_ = std::vector<Node>();
  last_ips_ = std::vector<std::uint64_t>();
  nodes_.shrink_to_fit();
  addresses_.shrink_to_fit();
  dense_.shrink_to_fit();
}

std::uint64_t StackTable::node_hash(Node caller, std::uint32_t address) const {
  return mix((static_cast<std::uint64_t>(caller) << 32) | address);
}

std::size_t StackTable::address_slot(std::uint64_t ip) const { return mix(ip) & (address_index_.size() - 1); }

// Sized for `nodes`; a node's number is below the slot count, so the bits
// from log2(slots) up carry the tag, taken from the hash's upper half, which
// the slot's position does not use.
void StackTable::grow_node_index(std::size_t nodes) {
  std::size_t slots = std::max(kMinIndexSlots, node_index_.size());
  while (needs_growth(nodes, slots)) slots *= 2;
  const auto node_bits = static_cast<unsigned>(std::countr_zero(slots));
  tag_mask_ = node_bits >= 32 ? 0 : ~std::uint32_t{0} << node_bits;
  node_index_.assign(slots, 0);
  constexpr std::size_t kAhead = 16;  // the slots are scattered: fetched ahead
  for (Node n = 1; n < nodes_.size(); ++n) {
    if (n + kAhead < nodes_.size()) {
      const NodeEntry& e = nodes_[n + kAhead];
      __builtin_prefetch(&node_index_[node_hash(e.caller, e.address) & (slots - 1)], 1);
    }
    const std::uint64_t h = node_hash(nodes_[n].caller, nodes_[n].address);
    std::size_t i = h & (slots - 1);
    while (node_index_[i] != 0) i = (i + 1) & (slots - 1);
    node_index_[i] = (static_cast<std::uint32_t>(h >> 32) & tag_mask_) | n;
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

StackTable::Node StackTable::find_child(Node caller, std::uint32_t address) const {
  const std::uint64_t h = node_hash(caller, address);
  const std::uint32_t tag = static_cast<std::uint32_t>(h >> 32) & tag_mask_;
  const std::size_t mask = node_index_.size() - 1;
  for (std::size_t i = h & mask; node_index_[i] != 0; i = (i + 1) & mask) {
    if ((node_index_[i] & tag_mask_) != tag) continue;
    const Node n = node_index_[i] & ~tag_mask_;
    if (nodes_[n].address == address && nodes_[n].caller == caller) return n;
  }
  return kRoot;
}

// The index must have room: add() grows it for a stack's new nodes at once.
StackTable::Node StackTable::append_child(Node caller, std::uint32_t address) {
  const auto n = static_cast<Node>(nodes_.size());
  nodes_.push_back(NodeEntry{address, caller});
  const std::uint64_t h = node_hash(caller, address);
  const std::size_t mask = node_index_.size() - 1;
  std::size_t i = h & mask;
  while (node_index_[i] != 0) i = (i + 1) & mask;
  node_index_[i] = (static_cast<std::uint32_t>(h >> 32) & tag_mask_) | n;
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
  if (node_index_.empty()) grow_node_index(nodes_.size());  // after seal()
  if (address_index_.empty()) grow_address_index();
  Node node = kRoot;
  const std::size_t depth = ips.size();
  std::size_t k = 0;  // frames from the outermost
  const std::size_t shared = std::min({depth, last_ips_.size(), last_path_.size()});
  while (k < shared && last_ips_[k] == ips[depth - 1 - k]) ++k;
  if (k > 0) node = last_path_[k - 1];
  last_path_.resize(k);
  last_ips_.resize(k);
  for (std::size_t j = k; j < depth; ++j) last_ips_.push_back(ips[depth - 1 - j]);
  new_addresses_.clear();
  for (; k < depth; ++k) {
    const std::uint32_t address = address_index(ips[depth - 1 - k]);
    const Node found = find_child(node, address);
    if (found == kRoot) {
      new_addresses_.push_back(address);
      break;
    }
    node = found;
    last_path_.push_back(node);
  }
  if (!new_addresses_.empty()) {
    // A node made just now has no children yet: every frame below the first
    // one not found is a new node, and needs no search, only a slot.
    for (++k; k < depth; ++k) new_addresses_.push_back(address_index(ips[depth - 1 - k]));
    const std::size_t count = new_addresses_.size();
    if (needs_growth(nodes_.size() + count, node_index_.size())) grow_node_index(nodes_.size() + count);
    // Their callers are known before they exist, so their slots, scattered
    // over the index, are fetched ahead.
    constexpr std::size_t kAhead = 8;
    const auto first = static_cast<Node>(nodes_.size());
    const auto slot = [&](std::size_t j) {
      return &node_index_[node_hash(j == 0 ? node : first + j - 1, new_addresses_[j]) & (node_index_.size() - 1)];
    };
    for (std::size_t j = 0; j < std::min(count, kAhead); ++j) __builtin_prefetch(slot(j), 1);
    for (std::size_t j = 0; j < count; ++j) {
      if (j + kAhead < count) __builtin_prefetch(slot(j + kAhead), 1);
      node = append_child(node, new_addresses_[j]);
      last_path_.push_back(node);
    }
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
