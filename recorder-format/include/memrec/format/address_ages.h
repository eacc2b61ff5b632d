// The address coding by age (FORMAT.md, "Columns", layouts 2 to 4): a heap
// address is named by how many blocks were freed (or allocated) in the frame
// since it last was, so the reader rebuilds it with one index into a list of
// the frame's addresses. A release names the block's allocation; an
// allocation names its address's last free, counted among the frees of
// blocks of its own size class where it can (allocators hand the last freed
// block of a size back first) and among all frees otherwise.
//
// Version 2 named addresses by position in 32-entry move-to-front rings,
// which missed nearly every free of a block that lived longer than 32
// allocations (churn: 4.4 bytes of address per allocation, 3.2 here) and cost
// the writer about 160 instructions per address, with branches the CPU cannot
// predict; AgeCoder costs one cache line per address.
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

// The writer's side: remembers, per address, its last allocation or its last
// free in the frame, whichever came later (an allocation is named only by
// the free that follows it, a free only by the allocation that reuses it), in
// a table of 64-byte buckets of four 16-byte entries keyed by address. A
// lookup reads one cache line. A bucket that is full drops a stale entry (of
// an earlier frame) first, then the free longest ago, then the allocation
// longest ago: a lost allocation makes its free a miss, coded as a delta of
// several bytes, while a lost free costs only when its block is reused.
// Forgetting costs bytes, never a wrong code, because an entry always names
// an occurrence of its own address.
//
// Against a table that forgets nothing (measured offline with 1 MiB frames),
// version 3's and 4's two direct-mapped tables of 640 KiB made python3's dump
// 39 % larger, churn's 6 % and cc1plus's 3 %; this one, in 1 MiB, 3 %, 0 %
// and 1 % (docs/design/frame_coding.md). Entries of earlier frames are told
// apart by their sequence numbers, so a new frame clears nothing but the
// class counters (and the whole table every 2^31 numbers: begin_frame).
// Allocation-free: the table lives in memory the caller maps (kMemoryBytes).
class AgeCoder {
 public:
  static constexpr std::uint32_t kBucketBits = 14;
  static constexpr std::size_t kMemoryBytes = (std::size_t{1} << kBucketBits) * sizeof(std::uint64_t) * 8;

  // `memory`: kMemoryBytes, 64-byte aligned, zero-filled (fresh anonymous
  // pages are).
  explicit AgeCoder(std::span<std::byte> memory) : buckets_(reinterpret_cast<Bucket*>(memory.data())) {}
  // Numbers allocations and frees from `first` (tests: where the 32 bits an
  // entry keeps wrap).
  AgeCoder(std::span<std::byte> memory, std::uint64_t first) : AgeCoder(memory) {
    alloc_seq_ = free_seq_ = alloc_start_ = free_start_ = first;
    alloc_epoch_ = free_epoch_ = first >> 31;
  }
  // Tests: numbers `n` allocations and `n` frees as used, as that many of
  // other addresses would, without their entries.
  void skip_numbers(std::uint64_t n) {
    alloc_seq_ += n;
    free_seq_ += n;
  }

  void begin_frame() {
    // An entry keeps the low 32 bits of its sequence number. Clearing the
    // table every 2^31 events keeps every entry within 2^32 of the counters,
    // so that an old entry can never pass for one of this frame.
    if ((alloc_seq_ >> 31) != alloc_epoch_ || (free_seq_ >> 31) != free_epoch_) {
      std::memset(buckets_, 0, kMemoryBytes);
      alloc_epoch_ = alloc_seq_ >> 31;
      free_epoch_ = free_seq_ >> 31;
    }
    alloc_start_ = alloc_seq_;
    free_start_ = free_seq_;
    std::memset(class_frees_, 0, sizeof(class_frees_));
  }

  // Starts loading the bucket free(addr) or alloc(addr, ...) uses: the
  // table is larger than the cache, and the loads were a third of the
  // coding's time. The writer calls it some events ahead.
  void prefetch(std::uint64_t addr) const { __builtin_prefetch(&buckets_[bucket(addr)], 1); }

  // A released block's code (kFirstAgeCode and up), or 0 for a miss.
  [[gnu::always_inline]] std::uint64_t free(std::uint64_t addr) {
    Entry* e = find(addr);
    std::uint64_t code = 0;
    std::uint32_t cls = 0;
    if (e != nullptr && !freed(e->info)) {
      const std::uint64_t age = age_of(e->info, alloc_seq_);
      if (age < alloc_seq_ - alloc_start_) {
        code = kFirstAgeCode + age;
        cls = class_of(e->info);
      }
    }
    if (e == nullptr) e = victim(addr);
    std::uint64_t class_seq = 0;
    if (cls != 0) {
      class_seq = class_frees_[cls]++;
      // More frees of one class in a frame than the entry holds: the block
      // is remembered without its class (found among all frees only).
      if (class_seq >= kClassSeqLimit) cls = 0;
    }
    e->addr = addr;
    e->info = pack(free_seq_++, cls != 0 ? class_seq : 0, cls, true);
    return code;
  }

  // An allocated block's code (kFirstAgeCode and up), or 0 for a miss.
  [[gnu::always_inline]] std::uint64_t alloc(std::uint64_t addr, std::uint64_t size) {
    const std::uint32_t cls = size_class(size);
    Entry* e = find(addr);
    std::uint64_t code = 0;
    if (e != nullptr && freed(e->info)) {
      const std::uint64_t age = age_of(e->info, free_seq_);
      if (age < free_seq_ - free_start_) {
        if (cls != 0 && class_of(e->info) == cls) {
          code = kFirstAgeCode + 2 * (class_frees_[cls] - 1 - class_seq_of(e->info));
        } else {
          code = kFirstAgeCode + 1 + 2 * age;
        }
      }
    }
    if (e == nullptr) e = victim(addr);
    e->addr = addr;
    e->info = pack(alloc_seq_++, 0, cls, false);
    return code;
  }

 private:
  // info: bit 0 freed, bits 1-10 the block's size class (0: unknown), bits
  // 11-31 its number among the frame's frees of that class, bits 32-63 the
  // low 32 bits of its allocation's or its free's number.
  struct Entry {
    std::uint64_t addr;  // 0: empty (no block starts at 0)
    std::uint64_t info;
  };
  struct alignas(64) Bucket {
    Entry e[4];
  };
  static_assert(sizeof(Bucket) == 64);
  static constexpr std::uint64_t kClassSeqLimit = std::uint64_t{1} << 21;

  static constexpr std::uint64_t pack(std::uint64_t seq, std::uint64_t class_seq, std::uint32_t cls, bool is_free) {
    return (seq << 32) | (class_seq << 11) | (static_cast<std::uint64_t>(cls) << 1) | (is_free ? 1 : 0);
  }
  static constexpr bool freed(std::uint64_t info) { return (info & 1) != 0; }
  static constexpr std::uint32_t class_of(std::uint64_t info) { return static_cast<std::uint32_t>(info >> 1) & 0x3ff; }
  static constexpr std::uint64_t class_seq_of(std::uint64_t info) { return (info >> 11) & (kClassSeqLimit - 1); }
  // How many numbers of the entry's kind were handed out since its own, of
  // `next` the next one: the age, when the entry is of this frame.
  static constexpr std::uint64_t age_of(std::uint64_t info, std::uint64_t next) {
    return static_cast<std::uint32_t>(static_cast<std::uint32_t>(next) - 1 - static_cast<std::uint32_t>(info >> 32));
  }

  static std::uint64_t hash(std::uint64_t addr) { return addr * 0x9e3779b97f4a7c15ull; }
  static std::size_t bucket(std::uint64_t addr) { return static_cast<std::size_t>(hash(addr) >> (64 - kBucketBits)); }
  // The entry an address takes when it can (victim()), and looks in first:
  // most lookups then compare one address.
  static std::size_t home(std::uint64_t addr) { return static_cast<std::size_t>(hash(addr) >> (62 - kBucketBits)) & 3; }

  Entry* find(std::uint64_t addr) {
    if (addr == 0) return nullptr;
    Bucket& b = buckets_[bucket(addr)];
    Entry& first = b.e[home(addr)];
    if (first.addr == addr) [[likely]]
      return &first;
    for (Entry& e : b.e) {
      if (e.addr == addr) return &e;
    }
    return nullptr;
  }

  // Whether `e` holds an address of this frame.
  bool current(const Entry& e) const {
    const bool is_free = freed(e.info);
    const std::uint64_t age = age_of(e.info, is_free ? free_seq_ : alloc_seq_);
    return e.addr != 0 && age < (is_free ? free_seq_ - free_start_ : alloc_seq_ - alloc_start_);
  }

  // The entry of `addr`'s bucket to give it: see the class comment. Out of
  // line: most addresses are found.
  [[gnu::noinline]] Entry* victim(std::uint64_t addr) {
    Bucket& b = buckets_[bucket(addr)];
    if (!current(b.e[home(addr)])) return &b.e[home(addr)];
    Entry* best = &b.e[0];
    std::uint64_t best_key = ~std::uint64_t{0};
    for (Entry& e : b.e) {
      const bool is_free = freed(e.info);
      const std::uint64_t age = age_of(e.info, is_free ? free_seq_ : alloc_seq_);
      // Smallest first: stale, then frees, then allocations, the oldest of each first.
      const std::uint64_t key = !current(e) ? 0 : (std::uint64_t{is_free ? 1u : 2u} << 32) | (0xffffffffu - age);
      if (key < best_key) {
        best_key = key;
        best = &e;
      }
    }
    return best;
  }

  Bucket* buckets_;
  // Numbered from 1, so that the zero-filled table names nothing.
  std::uint64_t alloc_seq_ = 1;
  std::uint64_t free_seq_ = 1;
  std::uint64_t alloc_start_ = 1;
  std::uint64_t free_start_ = 1;
  std::uint64_t alloc_epoch_ = 0;  // the counters' bits above 31 at the last clear
  std::uint64_t free_epoch_ = 0;
  std::uint64_t class_frees_[kSizeClasses] = {};
};

}  // namespace memrec::format
