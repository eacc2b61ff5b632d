// Version 3's address coding (FORMAT.md, "Addresses by age"): a heap address
// is named by how many blocks were freed (or allocated) in the frame since it
// last was, so the reader rebuilds it with one index into a list of the
// frame's addresses. A release names the block's allocation; an allocation
// names its address's last free, counted among the frees of blocks of its
// own size class where it can (allocators hand the last freed block of a
// size back first) and among all frees otherwise.
//
// Version 2 named addresses by position in 32-entry move-to-front rings,
// which missed nearly every free of a block that lived longer than 32
// allocations (churn: 4.4 bytes of address per allocation, 3.2 here) and cost
// the writer about 160 instructions per address, with branches the CPU cannot
// predict; AgeCoder costs one table load and one store per address.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace memrec::format {

// The size class of a block of `size` bytes, as FORMAT.md defines it: 16-byte
// steps, as glibc's chunks, up to kMaxClassedSize; 0 (none) for 0 and larger
// sizes.
inline constexpr std::uint64_t kMaxClassedSize = 16360;
inline constexpr std::uint32_t kSizeClasses = 1024;
constexpr std::uint32_t size_class(std::uint64_t size) {
  return size == 0 || size > kMaxClassedSize ? 0 : static_cast<std::uint32_t>((size + 23) >> 4);
}
static_assert(size_class(kMaxClassedSize) == kSizeClasses - 1);

// addr_k codes of a hit (below them, the misses of frame_columns.h). A free:
// kFirstAgeCode + its allocation's age. An allocation: kFirstAgeCode + 2 × age
// within its class (even), or kFirstAgeCode + 1 + 2 × age among all frees (odd).
inline constexpr std::uint64_t kFirstAgeCode = 2;

// The writer's side: finds an address's last allocation or free in a frame
// with direct-mapped tables keyed by address. A table keeps one entry per
// slot, so an entry pushed out by another address makes a later lookup miss
// (the address is then coded as a delta): a cost in bytes, never a wrong
// code, because an entry always names an occurrence of its own address.
// Entries of earlier frames are told apart by their sequence numbers, so a
// new frame clears nothing but the class counters. Allocation-free: the
// tables live in memory the caller maps (kMemoryBytes).
class AgeCoder {
 public:
  static constexpr std::uint32_t kTableBits = 14;
  static constexpr std::size_t kMemoryBytes = (std::size_t{1} << kTableBits) * (sizeof(std::uint64_t) * 5);

  // `memory`: kMemoryBytes, 8-byte aligned, zero-filled (fresh anonymous
  // pages are).
  explicit AgeCoder(std::span<std::byte> memory)
      : allocs_(reinterpret_cast<AllocSlot*>(memory.data())),
        frees_(reinterpret_cast<FreeSlot*>(memory.data() + kSlots * sizeof(AllocSlot))) {}

  void begin_frame() {
    alloc_start_ = alloc_seq_;
    free_start_ = free_seq_;
    std::memset(class_frees_, 0, sizeof(class_frees_));
  }

  // Starts loading the slots free(addr) and alloc(addr, ...) use: the tables
  // are larger than the cache, and the loads were a third of the coding's
  // time. The writer calls it some events ahead.
  void prefetch(std::uint64_t addr) const {
    __builtin_prefetch(&allocs_[slot(addr)], 1);
    __builtin_prefetch(&frees_[slot(addr)], 1);
  }

  // A released block's code (kFirstAgeCode and up), or 0 for a miss.
  std::uint64_t free(std::uint64_t addr) {
    const AllocSlot a = allocs_[slot(addr)];
    std::uint64_t code = 0;
    std::uint32_t cls = 0;
    if (a.addr == addr && (a.seq_class >> 16) >= alloc_start_) {
      code = kFirstAgeCode + (alloc_seq_ - 1 - (a.seq_class >> 16));
      cls = static_cast<std::uint32_t>(a.seq_class & 0xffff);
    }
    FreeSlot& f = frees_[slot(addr)];
    f.addr = addr;
    f.seq_class = free_seq_++ << 16 | cls;
    f.class_seq = cls != 0 ? class_frees_[cls]++ : 0;
    return code;
  }

  // An allocated block's code (kFirstAgeCode and up), or 0 for a miss.
  std::uint64_t alloc(std::uint64_t addr, std::uint64_t size) {
    const std::uint32_t cls = size_class(size);
    const FreeSlot& f = frees_[slot(addr)];
    std::uint64_t code = 0;
    if (f.addr == addr && (f.seq_class >> 16) >= free_start_) {
      if (cls != 0 && (f.seq_class & 0xffff) == cls) {
        code = kFirstAgeCode + 2 * (class_frees_[cls] - 1 - f.class_seq);
      } else {
        code = kFirstAgeCode + 1 + 2 * (free_seq_ - 1 - (f.seq_class >> 16));
      }
    }
    allocs_[slot(addr)] = AllocSlot{addr, alloc_seq_++ << 16 | cls};
    return code;
  }

 private:
  static constexpr std::size_t kSlots = std::size_t{1} << kTableBits;
  struct AllocSlot {
    std::uint64_t addr;
    std::uint64_t seq_class;  // the allocation's number << 16 | its size class
  };
  struct FreeSlot {
    std::uint64_t addr;
    std::uint64_t seq_class;  // the free's number << 16 | its block's size class (0: unknown)
    std::uint64_t class_seq;  // its number among the frame's frees of that class
  };
  static_assert(sizeof(AllocSlot) + sizeof(FreeSlot) == sizeof(std::uint64_t) * 5);

  static std::size_t slot(std::uint64_t addr) {
    return static_cast<std::size_t>((addr * 0x9e3779b97f4a7c15ull) >> (64 - kTableBits));
  }

  AllocSlot* allocs_;
  FreeSlot* frees_;
  // Numbered from 1, so that the zero-filled tables name nothing.
  std::uint64_t alloc_seq_ = 1;
  std::uint64_t free_seq_ = 1;
  std::uint64_t alloc_start_ = 1;
  std::uint64_t free_start_ = 1;
  std::uint64_t class_frees_[kSizeClasses] = {};
};

}  // namespace memrec::format
