// The rings of version 2's address coding (FORMAT.md, "Columns"): recently
// freed and recently allocated addresses, most recent first, where a heap
// address is coded as its position. AddressRing is the definition, a plain
// move-to-front list the reader walks; IndexedAddressRing gives the writer the
// same positions without scanning and shifting the list for every address
// (the scan and the shifts were two thirds of the writer's time on churn).
#pragma once

#include <array>
#include <bit>
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

// The positions of an AddressRing, kept differently: entries stay where they
// were written in a log of 64 cells, a bit mask says which still count, and a
// hash table finds an address's cells. An entry's position is the number of
// counted cells written after it (a popcount), so removing one moves nothing.
// The log wraps onto a counted cell when an entry outlived 64 pushes while
// most newer ones were removed (churn's freed ring: a tenth of its pushes);
// the counted cells then move to the front of the log, oldest first, and
// their table entries are renamed in place.
// Allocation-free and fixed-size: the writer keeps one per ring.
class IndexedAddressRing {
 public:
  struct Hit {
    std::uint32_t position;
    std::uint32_t cell;
  };

  std::uint32_t count() const { return count_; }

  // The newest entry of `addr`, as AddressRing::find would see it.
  std::optional<Hit> find(std::uint64_t addr) const {
    std::optional<Hit> best;
    std::uint32_t best_age = 0;
    for (std::uint32_t h = home(addr);; h = (h + 1) & (kTableSlots - 1)) {
      const std::uint8_t cell = table_[h];
      if (cell == kEmpty) break;
      if (log_[cell] != addr) continue;
      const std::uint32_t age = age_of(cell);  // larger is newer
      if (!best || age > best_age) {
        best = Hit{newer_than(age), cell};
        best_age = age;
      }
    }
    return best;
  }

  void remove(const Hit& hit) { drop(hit.cell); }

  void push(std::uint64_t addr) {
    if (count_ == kAddressRingSlots) drop(oldest_cell());
    if ((live_ >> head_ & 1) != 0) compact();
    log_[head_] = addr;
    live_ |= std::uint64_t{1} << head_;
    insert(addr, static_cast<std::uint8_t>(head_));
    head_ = (head_ + 1) & (kLogCells - 1);
    ++count_;
  }

 private:
  static constexpr std::uint32_t kLogCells = 64;  // the width of live_
  static constexpr std::uint32_t kTableSlots = 128;
  static constexpr std::uint8_t kEmpty = 0xff;
  static_assert(kAddressRingSlots < kLogCells);

  static std::uint32_t home(std::uint64_t addr) {
    return static_cast<std::uint32_t>((addr * 0x9e3779b97f4a7c15ull) >> (64 - 7)) & (kTableSlots - 1);
  }
  // 0 for the cell written 64 pushes ago, 63 for the newest (head_ - 1).
  std::uint32_t age_of(std::uint32_t cell) const { return (cell - head_) & (kLogCells - 1); }
  // Counted cells in age order, oldest in bit 0.
  std::uint64_t by_age() const { return std::rotr(live_, static_cast<int>(head_)); }
  std::uint32_t newer_than(std::uint32_t age) const { return bit_count(by_age() >> age >> 1); }
  std::uint32_t oldest_cell() const {
    return (static_cast<std::uint32_t>(std::countr_zero(by_age())) + head_) & (kLogCells - 1);
  }
  // std::popcount without -mpopcnt is a call into libgcc, which the preload
  // must not need: the classic bit-twiddling count instead.
  static std::uint32_t bit_count(std::uint64_t v) {
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return static_cast<std::uint32_t>((v * 0x0101010101010101ull) >> 56);
  }

  // The table slot that names `cell`.
  std::uint32_t slot_of(std::uint32_t cell) const {
    std::uint32_t h = home(log_[cell]);
    while (table_[h] != cell) h = (h + 1) & (kTableSlots - 1);
    return h;
  }
  void insert(std::uint64_t addr, std::uint8_t cell) {
    std::uint32_t h = home(addr);
    while (table_[h] != kEmpty) h = (h + 1) & (kTableSlots - 1);
    table_[h] = cell;
  }
  // Takes `cell` out of the mask and the table; linear probing's deletion
  // moves later entries of the run back so that no lookup stops early.
  void drop(std::uint32_t cell) {
    live_ &= ~(std::uint64_t{1} << cell);
    --count_;
    std::uint32_t hole = slot_of(cell);
    for (std::uint32_t j = (hole + 1) & (kTableSlots - 1); table_[j] != kEmpty; j = (j + 1) & (kTableSlots - 1)) {
      const std::uint32_t want = home(log_[table_[j]]);
      // table_[j] may fill the hole unless its home lies cyclically in (hole, j].
      if (((j - want) & (kTableSlots - 1)) >= ((j - hole) & (kTableSlots - 1))) {
        table_[hole] = table_[j];
        hole = j;
      }
    }
    table_[hole] = kEmpty;
  }
  // Moves the counted cells, oldest first, to cells 0, 1, ... (reading a
  // copy of the log) and renames their table entries in place; a mark bit
  // keeps a renamed entry from being taken for an old cell of that number.
  void compact() {
    const std::uint64_t order = by_age();
    std::uint64_t moved = 0;
    std::uint32_t n = 0;
    std::array<std::uint64_t, kLogCells> old = log_;
    for (std::uint64_t bits = order; bits != 0; bits &= bits - 1, ++n) {
      const std::uint32_t from = (static_cast<std::uint32_t>(std::countr_zero(bits)) + head_) & (kLogCells - 1);
      table_[slot_of_in(old, from)] = static_cast<std::uint8_t>(n | kMoved);
      log_[n] = old[from];
      moved |= std::uint64_t{1} << n;
    }
    for (std::uint8_t& t : table_) {
      if (t != kEmpty) t = static_cast<std::uint8_t>(t & ~kMoved);
    }
    live_ = moved;
    head_ = n;
  }
  // slot_of() against the log as it was before compact() began.
  std::uint32_t slot_of_in(const std::array<std::uint64_t, kLogCells>& old, std::uint32_t cell) const {
    std::uint32_t h = home(old[cell]);
    while (table_[h] != cell) h = (h + 1) & (kTableSlots - 1);
    return h;
  }
  static constexpr std::uint8_t kMoved = 0x80;  // marks a renamed table entry during compact()

  std::array<std::uint64_t, kLogCells> log_{};
  std::uint64_t live_ = 0;
  std::uint32_t head_ = 0;  // the next cell written
  std::uint32_t count_ = 0;
  std::array<std::uint8_t, kTableSlots> table_ = filled_table();

  static constexpr std::array<std::uint8_t, kTableSlots> filled_table() {
    std::array<std::uint8_t, kTableSlots> t{};
    t.fill(kEmpty);
    return t;
  }
};

}  // namespace memrec::format
