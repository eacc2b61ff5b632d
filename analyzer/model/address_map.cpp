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

const LiveBlock* AddressMap::find(std::uint64_t addr) const {
  if (addr == kEmpty) return top_ ? &*top_ : nullptr;
  for (std::size_t i = home(addr); slots_[i].addr != kEmpty; i = (i + 1) & mask()) {
    if (slots_[i].addr == addr) return &slots_[i].block;
  }
  return nullptr;
}

}  // namespace memrec::analyzer
