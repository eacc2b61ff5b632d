// Append-only columns of a table, coded in blocks of kBlockValues rows
// (model/block_coding.h) and appended to one spill column, with a block
// index in memory; the last, partial block stays raw, so a growing table
// extends it as rows come. The allocation table keeps its rows' allocation
// time, size, stack, address and thread so, and its frees' time and row
// (docs/design/compact_table.md). Readers decode a block's column at a time:
// get() through the per-thread cache, scans through a BlockReader of their own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include "model/block_coding.h"
#include "model/spill_column.h"

namespace memrec::analyzer {

class ColumnBlocks {
 public:
  static constexpr std::size_t kMaxColumns = 5;

  // Column 0 is kAscending: the one rows are searched by (count_until).
  explicit ColumnBlocks(std::initializer_list<Coding> codings);
  ColumnBlocks(ColumnBlocks&& other) noexcept;
  ColumnBlocks& operator=(ColumnBlocks&& other) noexcept;
  ~ColumnBlocks();

  std::size_t size() const { return index_.size() * kBlockValues + tail_[0].size(); }
  // Blocks holding rows: the coded ones, then the tail if it has rows.
  std::size_t blocks() const { return index_.size() + (tail_[0].empty() ? 0 : 1); }

  // One value per column, in order.
  void push(std::initializer_list<std::uint64_t> row);

  std::uint64_t get(std::size_t c, std::uint32_t row) const {
    const std::size_t b = row / kBlockValues;
    return (b < index_.size() ? cached(c, b) : tail_[c].data())[row % kBlockValues];
  }
  // Column c of block b: the tail's own values, else decoded into `scratch`.
  const std::uint64_t* read(std::size_t c, std::size_t b, BlockValues& scratch) const;

  // The rows whose column 0 is at most `v`: a search of the blocks' first
  // values, then of one block's.
  std::uint32_t count_until(std::uint64_t v) const;

  // Coded bytes, index and tail.
  std::uint64_t memory_bytes() const;

 private:
  struct BlockIndex {
    std::uint64_t offset = 0;  // in coded_
    std::uint64_t first = 0;   // column 0's first value
    std::array<std::uint32_t, kMaxColumns> bytes{};
  };

  void code_tail();
  const std::uint64_t* cached(std::size_t c, std::size_t b) const;
  void decode(std::size_t c, std::size_t b, std::uint64_t* out) const;
  std::uint64_t first(std::size_t b) const { return b < index_.size() ? index_[b].first : tail_[0][0]; }

  std::uint64_t owner_;  // names this store's blocks in the per-thread caches
  std::size_t columns_ = 0;
  std::array<Coding, kMaxColumns> codings_{};
  SpillColumn<std::uint8_t> coded_;
  std::vector<BlockIndex> index_;
  std::array<std::vector<std::uint64_t>, kMaxColumns> tail_;
  std::unique_ptr<BlockCoder> coder_;
};

// A scan's own decoded columns: each block it loads is decoded once, and
// the values stay valid until the next load (no cache that another query on
// this thread could evict).
class BlockReader {
 public:
  BlockReader(const ColumnBlocks& blocks, std::initializer_list<std::size_t> columns);
  // Decodes block b's columns; returns its first row.
  std::uint32_t load(std::size_t b);
  const std::uint64_t* operator[](std::size_t c) const { return values_[c]; }

 private:
  const ColumnBlocks& blocks_;
  std::vector<std::size_t> columns_;
  std::array<const std::uint64_t*, ColumnBlocks::kMaxColumns> values_{};
  std::vector<BlockValues> scratch_;
};

}  // namespace memrec::analyzer
