// Reads an AllocationTable's rows in ascending order (a range, a site's list)
// a block at a time: each block's columns and lifetimes are decoded once,
// into the reader's own buffers, which no other query can evict. For scans;
// single rows read through the table's accessors.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>

#include "model/allocation_table.h"

namespace memrec::analyzer {

class RowReader {
 public:
  // `columns`: the RowColumns to read; free_ns() needs kRowTime among them.
  RowReader(const AllocationTable& t, std::initializer_list<std::size_t> columns)
      : t_(t), reader_(t.row_blocks(), columns) {}

  // Makes `row` the one read, loading its block unless it is loaded already.
  void seek(std::uint32_t row) {
    const std::size_t b = row / kBlockValues;
    if (b != block_) load(b);
    i_ = row % kBlockValues;
    row_ = row;
  }
  std::uint64_t operator[](std::size_t c) const { return reader_[c][i_]; }
  std::uint64_t free_ns() const {
    if (lives_ == nullptr) return t_.free_ns(row_);
    const std::uint64_t life = lives_[i_];
    return life == 0 ? kNeverFreed : reader_[kRowTime][i_] + (life - 1);
  }

 private:
  void load(std::size_t b) {
    reader_.load(b);
    block_ = b;
    if (const SealedBlocks* lives = t_.lifetime_blocks()) {
      if (!scratch_) scratch_.reset(new BlockValues);  // no zeroing: decoded into
      lives_ = lives->read(b, *scratch_);
    }
  }

  const AllocationTable& t_;
  BlockReader reader_;
  std::unique_ptr<BlockValues> scratch_;
  const std::uint64_t* lives_ = nullptr;
  std::size_t block_ = std::numeric_limits<std::size_t>::max();
  std::uint32_t row_ = 0;
  std::uint32_t i_ = 0;
};

}  // namespace memrec::analyzer
