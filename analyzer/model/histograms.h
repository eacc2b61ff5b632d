// Allocation sizes and lifetimes in powers of two, as heaptrack_gui's and
// bytehound's histograms: how many allocations (and their bytes) fell in each
// class. Filled by the replay for the whole run and from the allocation table
// for a range, so both give the same classes.
#pragma once

#include <array>
#include <bit>
#include <cstdint>

namespace memrec::analyzer {

// Class 0 holds the value 0; class k >= 1 holds [2^(k-1), 2^k - 1].
struct Log2Classes {
  static constexpr unsigned kClasses = 65;
  std::array<std::uint64_t, kClasses> count{};
  std::array<std::uint64_t, kClasses> bytes{};

  static unsigned class_of(std::uint64_t value) { return static_cast<unsigned>(std::bit_width(value)); }
  static std::uint64_t lowest(unsigned k) { return k == 0 ? 0 : std::uint64_t{1} << (k - 1); }
  static std::uint64_t highest(unsigned k) { return k == 0 ? 0 : (std::uint64_t{1} << (k - 1)) * 2 - 1; }

  void add(std::uint64_t value, std::uint64_t size) {
    const unsigned k = class_of(value);
    ++count[k];
    bytes[k] += size;
  }
  void merge(const Log2Classes& other) {
    for (unsigned k = 0; k < kClasses; ++k) {
      count[k] += other.count[k];
      bytes[k] += other.bytes[k];
    }
  }
};

// Of the allocations made in a window: their sizes, and the lifetimes (ns) of
// those freed in it; `unfreed` (and its bytes) are those still live at its end.
struct Histograms {
  Log2Classes sizes;
  Log2Classes lifetimes;
  std::uint64_t unfreed = 0;
  std::uint64_t unfreed_bytes = 0;

  void merge(const Histograms& other) {
    sizes.merge(other.sizes);
    lifetimes.merge(other.lifetimes);
    unfreed += other.unfreed;
    unfreed_bytes += other.unfreed_bytes;
  }
};

}  // namespace memrec::analyzer
