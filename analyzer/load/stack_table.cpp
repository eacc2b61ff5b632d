// Consecutive stacks mostly share their outer frames, so add() first follows
// the previous stack's path while the addresses agree and only then looks
// nodes up in the index: most frames of most stacks cost one comparison.
#include "load/stack_table.h"

#include <algorithm>

namespace memrec::analyzer {
namespace {

constexpr std::size_t kMinIndexSlots = 1024;

}  // namespace

StackTable::StackTable() { clear(); }

void StackTable::clear() {
  ips_.assign(1, 0);
  callers_.assign(1, kRoot);
  index_.assign(kMinIndexSlots, kRoot);
  last_path_.clear();
  dense_.clear();
  sparse_.clear();
  defined_ = 0;
}

void StackTable::seal() {
  index_ = {};
  last_path_ = {};
  ips_.shrink_to_fit();
  callers_.shrink_to_fit();
  dense_.shrink_to_fit();
}

std::size_t StackTable::slot_of(Node caller, std::uint64_t ip) const {
  std::uint64_t h = ip ^ (static_cast<std::uint64_t>(caller) * 0x9e3779b97f4a7c15ull);
  h = (h ^ (h >> 33)) * 0xff51afd7ed558ccdull;  // murmur3's finalizer: every key bit reaches the low bits
  h = (h ^ (h >> 33)) * 0xc4ceb9fe1a85ec53ull;
  return static_cast<std::size_t>(h ^ (h >> 33)) & (index_.size() - 1);
}

void StackTable::grow_index() {
  std::size_t slots = std::max(kMinIndexSlots, index_.size());
  while (slots < 2 * ips_.size()) slots *= 2;
  index_.assign(slots, kRoot);
  for (Node n = 1; n < ips_.size(); ++n) {
    std::size_t i = slot_of(callers_[n], ips_[n]);
    while (index_[i] != kRoot) i = (i + 1) & (index_.size() - 1);
    index_[i] = n;
  }
}

StackTable::Node StackTable::child(Node caller, std::uint64_t ip) {
  if (index_.size() < 2 * ips_.size()) grow_index();
  std::size_t i = slot_of(caller, ip);
  for (; index_[i] != kRoot; i = (i + 1) & (index_.size() - 1)) {
    const Node n = index_[i];
    if (ips_[n] == ip && callers_[n] == caller) return n;
  }
  const auto n = static_cast<Node>(ips_.size());
  ips_.push_back(ip);
  callers_.push_back(caller);
  index_[i] = n;
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
  Node node = kRoot;
  const std::size_t depth = ips.size();
  std::size_t k = 0;  // frames from the outermost
  for (; k < depth && k < last_path_.size() && ips_[last_path_[k]] == ips[depth - 1 - k]; ++k) node = last_path_[k];
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
