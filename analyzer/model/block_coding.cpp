// The varints and zstd of a coded block; the per-thread decode state.
#include "model/block_coding.h"

#include <zstd.h>

#include <atomic>
#include <stdexcept>
#include <string>

namespace memrec::analyzer {
namespace {

constexpr std::size_t kCacheSlots = 64;  // 32 KiB each, per thread that reads
constexpr std::size_t kMaxVarint = 10;

std::atomic<std::uint64_t> g_next_owner{1};

std::uint64_t zigzag(std::int64_t v) {
  return (static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63);
}
std::uint64_t unzigzag(std::uint64_t v) { return (v >> 1) ^ (0 - (v & 1)); }

std::uint8_t* put_varint(std::uint8_t* p, std::uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<std::uint8_t>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<std::uint8_t>(v);
  return p;
}

const std::uint8_t* get_varint(const std::uint8_t* p, std::uint64_t& v) {
  v = 0;
  for (unsigned shift = 0;; shift += 7) {
    const std::uint8_t b = *p++;
    v |= std::uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return p;
  }
}

[[noreturn]] void zstd_failed(std::size_t code) {
  throw std::runtime_error(std::string("allocation table: zstd: ") + ZSTD_getErrorName(code));
}

struct DecodeContext {
  ZSTD_DCtx* dctx = ZSTD_createDCtx();
  std::vector<std::uint8_t> bytes = std::vector<std::uint8_t>(std::size_t{kBlockValues} * kMaxVarint);
  DecodeContext() = default;
  DecodeContext(const DecodeContext&) = delete;
  DecodeContext& operator=(const DecodeContext&) = delete;
  ~DecodeContext() { ZSTD_freeDCtx(dctx); }
};

thread_local DecodeContext t_decode;
thread_local std::array<BlockCacheSlot, kCacheSlots> t_cache;

}  // namespace

struct BlockCoder::Context {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<std::uint8_t> varints = std::vector<std::uint8_t>(std::size_t{kBlockValues} * kMaxVarint);
  std::vector<std::uint8_t> packed = std::vector<std::uint8_t>(ZSTD_compressBound(varints.size()));
  ~Context() { ZSTD_freeCCtx(cctx); }
};

BlockCoder::BlockCoder() : c_(std::make_unique<Context>()) {}
BlockCoder::~BlockCoder() = default;

std::uint32_t BlockCoder::code(Coding coding, const std::uint64_t* values, std::size_t n, std::uint64_t first,
                               SpillColumn<std::uint8_t>& out) {
  std::uint8_t* const begin = c_->varints.data();
  std::uint8_t* p = begin;
  std::uint64_t prev = coding == Coding::kAscending ? first : 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t v = values[i];
    switch (coding) {
      case Coding::kAscending:
        p = put_varint(p, v - prev);
        break;
      case Coding::kZigzagDelta:
        p = put_varint(p, zigzag(static_cast<std::int64_t>(v - prev)));
        break;
      case Coding::kPlain:
        p = put_varint(p, v);
        break;
    }
    prev = v;
  }
  const auto raw = static_cast<std::size_t>(p - begin);
  const std::size_t z = ZSTD_compressCCtx(c_->cctx, c_->packed.data(), c_->packed.size(), begin, raw, 1);
  if (ZSTD_isError(z)) zstd_failed(z);
  if (z <= raw - raw / 8) {
    out.append(c_->packed.data(), z);
    return static_cast<std::uint32_t>(z) | kZstdCoded;
  }
  out.append(begin, raw);
  return static_cast<std::uint32_t>(raw);
}

void decode_block(Coding coding, const std::uint8_t* p, std::uint32_t coded, std::size_t n, std::uint64_t first,
                  std::uint64_t* out) {
  if ((coded & kZstdCoded) != 0) {
    std::vector<std::uint8_t>& bytes = t_decode.bytes;
    const std::size_t got = ZSTD_decompressDCtx(t_decode.dctx, bytes.data(), bytes.size(), p, coded & ~kZstdCoded);
    if (ZSTD_isError(got)) zstd_failed(got);
    p = bytes.data();
  }
  std::uint64_t v = 0;
  switch (coding) {
    case Coding::kAscending: {
      std::uint64_t prev = first;
      for (std::size_t i = 0; i < n; ++i) {
        p = get_varint(p, v);
        out[i] = prev += v;
      }
      break;
    }
    case Coding::kZigzagDelta: {
      std::uint64_t prev = 0;
      for (std::size_t i = 0; i < n; ++i) {
        p = get_varint(p, v);
        out[i] = prev += unzigzag(v);
      }
      break;
    }
    case Coding::kPlain:
      for (std::size_t i = 0; i < n; ++i) p = get_varint(p, out[i]);
      break;
  }
}

std::uint64_t next_block_owner() { return g_next_owner.fetch_add(1, std::memory_order_relaxed); }

// Stores start at different slots, so two read row by row together (a
// row's time and its lifetime) rarely take turns in one slot.
BlockCacheSlot& block_cache_slot(std::uint64_t owner, std::uint64_t key) {
  return t_cache[(key + owner * 23) % kCacheSlots];
}

}  // namespace memrec::analyzer
