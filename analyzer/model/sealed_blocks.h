// One column of values by row block, each block coded once its values stop
// changing, in any order (model/block_coding.h): the finished allocation
// table's lifetimes, coded as each block's rows are all freed and at
// finish() for the rest (docs/design/compact_table.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/block_coding.h"
#include "model/spill_column.h"

namespace memrec::analyzer {

class SealedBlocks {
 public:
  SealedBlocks();
  SealedBlocks(SealedBlocks&& other) noexcept;
  SealedBlocks& operator=(SealedBlocks&& other) noexcept;
  ~SealedBlocks();

  bool sealed(std::size_t b) const { return b < index_.size() && index_[b].bytes != 0; }
  // Codes block b's n values (kBlockValues but for the last block); once.
  void seal(std::size_t b, const std::uint64_t* values, std::size_t n);

  // The row's value; its block must be sealed.
  std::uint64_t get(std::uint32_t row) const {
    const std::size_t b = row / kBlockValues;
    return cached_block(owner_, b, [&](std::uint64_t* out) { decode(b, out); })[row % kBlockValues];
  }
  // Block b's values decoded into `scratch`.
  const std::uint64_t* read(std::size_t b, BlockValues& scratch) const {
    decode(b, scratch.data());
    return scratch.data();
  }

  std::uint64_t memory_bytes() const { return coded_.size() + index_.capacity() * sizeof(Entry); }

 private:
  struct Entry {
    std::uint64_t offset = 0;  // in coded_
    std::uint32_t bytes = 0;   // coded length (kZstdCoded set if zstd'ed); 0: not sealed
    std::uint32_t values = 0;
  };
  void decode(std::size_t b, std::uint64_t* out) const;

  std::uint64_t owner_;
  SpillColumn<std::uint8_t> coded_;
  std::vector<Entry> index_;
  std::unique_ptr<BlockCoder> coder_;
};

}  // namespace memrec::analyzer
