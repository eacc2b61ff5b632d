// How the allocation table codes a block of up to kBlockValues values of one
// column (column_blocks.h, sealed_blocks.h), and the small per-thread cache
// its row accessors decode into. Pure helpers; the callers own the bytes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/spill_column.h"

namespace memrec::analyzer {

inline constexpr std::uint32_t kBlockValues = 4096;
using BlockValues = std::array<std::uint64_t, kBlockValues>;

// Ascending: varints of the step from the value before (the first from the
// block's first value, kept in its index). ZigzagDelta: of the signed step
// (addresses, rows freed). Plain: of the value.
enum class Coding : std::uint8_t { kAscending, kZigzagDelta, kPlain };

// A coded length with this bit set was zstd'ed.
inline constexpr std::uint32_t kZstdCoded = 1u << 31;

class BlockCoder {
 public:
  BlockCoder();
  BlockCoder(const BlockCoder&) = delete;
  BlockCoder& operator=(const BlockCoder&) = delete;
  ~BlockCoder();
  // Appends values[0, n) to `out` as varints, zstd'ed (level 1) when that
  // saves an eighth; returns the bytes appended, kZstdCoded set if zstd'ed.
  std::uint32_t code(Coding coding, const std::uint64_t* values, std::size_t n, std::uint64_t first,
                     SpillColumn<std::uint8_t>& out);

 private:
  struct Context;
  std::unique_ptr<Context> c_;
};

// The inverse of BlockCoder::code into out[0, n). Throws on a zstd error
// (the table wrote these bytes itself: it would be a bug, not bad input).
void decode_block(Coding coding, const std::uint8_t* bytes, std::uint32_t coded, std::size_t n, std::uint64_t first,
                  std::uint64_t* out);

// A number no other block store has had (the cache's owner ids).
std::uint64_t next_block_owner();

// This thread's cache slot for (owner, key): direct-mapped, so a scan's
// consecutive blocks take consecutive slots. A slot's values stay valid
// until this thread asks for another key that maps to it.
struct BlockCacheSlot {
  std::uint64_t owner = 0;
  std::uint64_t key = 0;
  std::unique_ptr<BlockValues> values;
};
BlockCacheSlot& block_cache_slot(std::uint64_t owner, std::uint64_t key);

template <typename Decode>
const std::uint64_t* cached_block(std::uint64_t owner, std::uint64_t key, const Decode& decode) {
  BlockCacheSlot& slot = block_cache_slot(owner, key);
  if (slot.owner != owner || slot.key != key) [[unlikely]] {
    if (!slot.values) slot.values = std::make_unique<BlockValues>();
    slot.owner = 0;  // not valid while being decoded: an exception leaves it so
    decode(slot.values->data());
    slot.owner = owner;
    slot.key = key;
  }
  return slot.values->data();
}

}  // namespace memrec::analyzer
