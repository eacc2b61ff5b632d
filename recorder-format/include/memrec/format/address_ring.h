// The rings of version 2's address coding (FORMAT.md, "Columns"): recently
// freed and recently allocated addresses, most recent first, where a heap
// address is coded as its position: a plain move-to-front list. Readers walk
// it for version-2 dumps; the recorder now writes version 3's ages
// (address_ages.h), and only tests write rings.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>

namespace memrec::format {

inline constexpr std::uint32_t kAddressRingSlots = 32;

// Most recent first. A hit leaves the ring; an address pushed twice (a free
// the recorder missed) is in it twice, and its newer copy is found first.
struct AddressRing {
  std::array<std::uint64_t, kAddressRingSlots> slots{};
  std::uint32_t count = 0;

  std::optional<std::uint32_t> find(std::uint64_t addr) const {
    for (std::uint32_t i = 0; i < count; ++i) {
      if (slots[i] == addr) return i;
    }
    return std::nullopt;
  }
  void remove(std::uint32_t i) {
    std::memmove(&slots[i], &slots[i + 1], (count - i - 1) * sizeof(std::uint64_t));
    --count;
  }
  void push(std::uint64_t addr) {
    const std::uint32_t kept = count < kAddressRingSlots ? count : kAddressRingSlots - 1;
    std::memmove(&slots[1], &slots[0], kept * sizeof(std::uint64_t));
    slots[0] = addr;
    count = kept + 1;
  }
};

}  // namespace memrec::format
