// Blocks are appended to the coded bytes in the order they are sealed; the
// index, by block, says where each went.
#include "model/sealed_blocks.h"

#include <utility>

namespace memrec::analyzer {

SealedBlocks::SealedBlocks() : owner_(next_block_owner()) {}

// The moved-to store keeps the owner id, so what the caches hold of it stays valid.
SealedBlocks::SealedBlocks(SealedBlocks&& other) noexcept
    : owner_(std::exchange(other.owner_, next_block_owner())),
      coded_(std::move(other.coded_)),
      index_(std::move(other.index_)),
      coder_(std::move(other.coder_)) {}

SealedBlocks& SealedBlocks::operator=(SealedBlocks&& other) noexcept {
  owner_ = std::exchange(other.owner_, next_block_owner());
  coded_ = std::move(other.coded_);
  index_ = std::move(other.index_);
  coder_ = std::move(other.coder_);
  return *this;
}

SealedBlocks::~SealedBlocks() = default;

void SealedBlocks::seal(std::size_t b, const std::uint64_t* values, std::size_t n) {
  if (!coder_) coder_ = std::make_unique<BlockCoder>();
  if (b >= index_.size()) index_.resize(b + 1);
  Entry& e = index_[b];
  e.offset = coded_.size();
  e.values = static_cast<std::uint32_t>(n);
  e.bytes = coder_->code(Coding::kPlain, values, n, 0, coded_);
}

void SealedBlocks::decode(std::size_t b, std::uint64_t* out) const {
  const Entry& e = index_[b];
  decode_block(Coding::kPlain, coded_.data() + e.offset, e.bytes, e.values, 0, out);
}

}  // namespace memrec::analyzer
