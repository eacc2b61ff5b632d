// Linear probing keeps a lookup to one or two cache lines; backward-shift
// deletion keeps probe chains short without tombstones, which matters in a
// replay where every block is eventually freed.
#include "model/address_map.h"

#include <bit>
#include <utility>

namespace memrec::analyzer {

void AddressMap::rehash(std::size_t capacity) {
  std::vector<Slot> old = std::exchange(slots_, std::vector<Slot>(capacity));
  shift_ = 64 - std::countr_zero(capacity);
  for (const Slot& s : old) {
    if (s.addr == kEmpty) continue;
    std::size_t i = home(s.addr);
    while (slots_[i].addr != kEmpty) i = (i + 1) & mask();
    slots_[i] = s;
  }
}

std::optional<LiveBlock> AddressMap::insert(std::uint64_t addr, const LiveBlock& block) {
  if (addr == kEmpty) {
    std::optional<LiveBlock> old = std::exchange(top_, block);
    if (!old) ++size_;
    return old;
  }
  if ((size_ + 1) * 2 > slots_.size()) rehash(slots_.size() * 2);
  std::size_t i = home(addr);
  while (slots_[i].addr != kEmpty && slots_[i].addr != addr) i = (i + 1) & mask();
  if (slots_[i].addr == addr) return std::exchange(slots_[i].block, block);
  slots_[i] = Slot{addr, block};
  ++size_;
  return std::nullopt;
}

std::optional<LiveBlock> AddressMap::erase(std::uint64_t addr) {
  if (addr == kEmpty) {
    std::optional<LiveBlock> old = std::exchange(top_, std::nullopt);
    if (old) --size_;
    return old;
  }
  std::size_t i = home(addr);
  while (slots_[i].addr != addr) {
    if (slots_[i].addr == kEmpty) return std::nullopt;
    i = (i + 1) & mask();
  }
  const LiveBlock removed = slots_[i].block;
  --size_;
  // Pull later members of the probe chain back over the hole, so that every
  // entry stays reachable from its home slot without tombstones.
  std::size_t hole = i;
  for (std::size_t j = (i + 1) & mask(); slots_[j].addr != kEmpty; j = (j + 1) & mask()) {
    const std::size_t want = home(slots_[j].addr);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    if (((j - want) & mask()) >= ((j - hole) & mask())) {
      slots_[hole] = slots_[j];
      hole = j;
    }
  }
  slots_[hole] = Slot{};
  return removed;
}

const LiveBlock* AddressMap::find(std::uint64_t addr) const {
  if (addr == kEmpty) return top_ ? &*top_ : nullptr;
  for (std::size_t i = home(addr); slots_[i].addr != kEmpty; i = (i + 1) & mask()) {
    if (slots_[i].addr == addr) return &slots_[i].block;
  }
  return nullptr;
}

}  // namespace memrec::analyzer
