// A coded block is its columns' bytes one after the other; the index keeps
// where the block starts, each column's coded length, and column 0's first
// value (the base of its steps and the key of searches).
#include "model/column_blocks.h"

#include <algorithm>
#include <utility>

namespace memrec::analyzer {

ColumnBlocks::ColumnBlocks(std::initializer_list<Coding> codings) : owner_(next_block_owner()) {
  for (const Coding c : codings) codings_[columns_++] = c;
}

// The moved-to store keeps the owner id, so what the caches hold of it stays valid.
ColumnBlocks::ColumnBlocks(ColumnBlocks&& other) noexcept
    : owner_(std::exchange(other.owner_, next_block_owner())),
      columns_(other.columns_),
      codings_(other.codings_),
      coded_(std::move(other.coded_)),
      index_(std::move(other.index_)),
      tail_(std::move(other.tail_)),
      coder_(std::move(other.coder_)) {}

ColumnBlocks& ColumnBlocks::operator=(ColumnBlocks&& other) noexcept {
  owner_ = std::exchange(other.owner_, next_block_owner());
  columns_ = other.columns_;
  codings_ = other.codings_;
  coded_ = std::move(other.coded_);
  index_ = std::move(other.index_);
  tail_ = std::move(other.tail_);
  coder_ = std::move(other.coder_);
  return *this;
}

ColumnBlocks::~ColumnBlocks() = default;

void ColumnBlocks::push(std::initializer_list<std::uint64_t> row) {
  if (tail_[0].empty()) {
    for (std::size_t c = 0; c < columns_; ++c) tail_[c].reserve(kBlockValues);
  }
  std::size_t c = 0;
  for (const std::uint64_t v : row) tail_[c++].push_back(v);
  if (tail_[0].size() == kBlockValues) code_tail();
}

void ColumnBlocks::code_tail() {
  if (!coder_) coder_ = std::make_unique<BlockCoder>();
  BlockIndex entry;
  entry.offset = coded_.size();
  entry.first = tail_[0][0];
  for (std::size_t c = 0; c < columns_; ++c) {
    entry.bytes[c] = coder_->code(codings_[c], tail_[c].data(), kBlockValues, entry.first, coded_);
    tail_[c].clear();
  }
  index_.push_back(entry);
}

void ColumnBlocks::decode(std::size_t c, std::size_t b, std::uint64_t* out) const {
  const BlockIndex& entry = index_[b];
  std::uint64_t at = entry.offset;
  for (std::size_t i = 0; i < c; ++i) at += entry.bytes[i] & ~kZstdCoded;
  decode_block(codings_[c], coded_.data() + at, entry.bytes[c], kBlockValues, entry.first, out);
}

const std::uint64_t* ColumnBlocks::cached(std::size_t c, std::size_t b) const {
  return cached_block(owner_, b * kMaxColumns + c, [&](std::uint64_t* out) { decode(c, b, out); });
}

const std::uint64_t* ColumnBlocks::read(std::size_t c, std::size_t b, BlockValues& scratch) const {
  if (b >= index_.size()) return tail_[c].data();
  decode(c, b, scratch.data());
  return scratch.data();
}

std::uint32_t ColumnBlocks::count_until(std::uint64_t v) const {
  std::size_t lo = 0;
  std::size_t hi = blocks();
  while (lo < hi) {  // the blocks whose first value is at most v
    const std::size_t mid = lo + (hi - lo) / 2;
    if (first(mid) <= v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo == 0) return 0;
  const std::size_t b = lo - 1;
  const bool coded = b < index_.size();
  const std::uint64_t* values = coded ? cached(0, b) : tail_[0].data();
  const std::size_t n = coded ? kBlockValues : tail_[0].size();
  return static_cast<std::uint32_t>(b * kBlockValues +
                                    static_cast<std::size_t>(std::upper_bound(values, values + n, v) - values));
}

std::uint64_t ColumnBlocks::memory_bytes() const {
  std::uint64_t tail = 0;
  for (const auto& column : tail_) tail += column.capacity() * sizeof(std::uint64_t);
  return coded_.size() + index_.capacity() * sizeof(BlockIndex) + tail;
}

BlockReader::BlockReader(const ColumnBlocks& blocks, std::initializer_list<std::size_t> columns)
    : blocks_(blocks), columns_(columns) {}

// The buffers are made at the first load: a scan of a site without rows
// in the range pays nothing.
std::uint32_t BlockReader::load(std::size_t b) {
  if (scratch_.size() != columns_.size()) scratch_.resize(columns_.size());
  for (std::size_t i = 0; i < columns_.size(); ++i) values_[columns_[i]] = blocks_.read(columns_[i], b, scratch_[i]);
  return static_cast<std::uint32_t>(b * kBlockValues);
}

}  // namespace memrec::analyzer
