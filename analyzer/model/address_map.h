// Live heap blocks by address: an open-addressing hash map (linear probing,
// backward-shift deletion), because the replay does one lookup per event and
// a node-based std::unordered_map spends most of its time in the allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "load/heap_event.h"

namespace memrec::analyzer {

inline constexpr std::uint32_t kNoRow = ~0u;  // no allocation, no row

struct LiveBlock {
  std::uint64_t size = 0;
  StackId stack;
  std::uint32_t row = 0;      // its allocation's index in merged order (StackReplay; the allocation table's row)
  std::uint64_t time_ns = 0;  // when it was allocated
};
static_assert(sizeof(LiveBlock) == 24, "the row sits in what was padding");

class AddressMap {
 public:
  AddressMap() { rehash(kMinCapacity); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Inserts `block` at `addr`; returns the block it replaced, if any.
  std::optional<LiveBlock> insert(std::uint64_t addr, const LiveBlock& block);
  // Removes the block at `addr`; returns it, or nothing if none was there.
  std::optional<LiveBlock> erase(std::uint64_t addr);
  const LiveBlock* find(std::uint64_t addr) const;
  // Starts loading the slot `addr` hashes to, for a lookup a few events later.
  void prefetch(std::uint64_t addr) const { __builtin_prefetch(&slots_[home(addr)]); }

  // Calls fn(addr, block) for every block, in no particular order.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const Slot& s : slots_) {
      if (s.addr != kEmpty) fn(s.addr, s.block);
    }
    if (top_) fn(kEmpty, *top_);
  }

 private:
  // The empty-slot marker; a block really at this address lives in `top_`.
  static constexpr std::uint64_t kEmpty = ~0ull;
  static constexpr std::size_t kMinCapacity = 1024;

  struct Slot {
    std::uint64_t addr = kEmpty;
    LiveBlock block;
  };

  std::size_t home(std::uint64_t addr) const {
    // Fibonacci hashing: heap addresses share their low bits (alignment).
    return static_cast<std::size_t>((addr * 0x9e3779b97f4a7c15ull) >> shift_);
  }
  std::size_t mask() const { return slots_.size() - 1; }
  void rehash(std::size_t capacity);

  // A power of two, at most half full. At up to 7/8, churn's replay (a
  // free and an allocation per step, 4,096 blocks live) spent a quarter of
  // its time in the probe and shift loops, whose lengths it cannot predict;
  // at most half full it spends a tenth, for 64-128 bytes a live block
  // instead of 37-73 (cc1plus's report: the same peak).
  std::vector<Slot> slots_;
  std::size_t size_ = 0;  // including top_
  int shift_ = 64;
  std::optional<LiveBlock> top_;
};

// Inline, always: the replay calls one of these per event, and the call and the
// returned optional's trip through memory were a quarter of their instructions
// (left to itself, the compiler kept erase() a call).
[[gnu::always_inline]] inline std::optional<LiveBlock> AddressMap::insert(std::uint64_t addr, const LiveBlock& block) {
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

[[gnu::always_inline]] inline std::optional<LiveBlock> AddressMap::erase(std::uint64_t addr) {
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

}  // namespace memrec::analyzer
