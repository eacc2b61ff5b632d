// libFuzzer custom mutator for reader_fuzzer (linked only into the libFuzzer
// build). Byte mutations of a zstd frame almost always fail its checksum, so
// the record decoder would rarely see new input. Half the time this mutates
// the records *inside* one frame and recompresses them (with a checksum, as
// the recorder does); the other half it leaves the bytes to libFuzzer.
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "memrec/format/file_header.h"
#include "memrec/format/records.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using memrec::format::kFileHeaderPrefixBytes;
using memrec::format::kFrameEnvelopeBytes;

// Payloads larger than this are left to byte mutation: keeps each run fast.
constexpr std::size_t kMaxPayloadBytes = 1u << 20;
// Room a mutation may add to a payload.
constexpr std::size_t kGrowBytes = 256;

struct Span {
  std::size_t offset = 0;  // of the envelope
  std::size_t compressed = 0;
  std::size_t decompressed = 0;
};

std::uint32_t u32le(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void put_u32le(std::uint8_t* p, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::uint8_t>(v >> (8 * i));
}

// The complete frames after a well-formed header prefix, without decoding them.
std::vector<Span> find_frames(const std::uint8_t* data, std::size_t size) {
  std::vector<Span> frames;
  if (size < kFileHeaderPrefixBytes) return frames;
  std::size_t at = kFileHeaderPrefixBytes + u32le(data + 12);
  while (at < size && size - at >= kFrameEnvelopeBytes &&
         std::memcmp(data + at, memrec::format::kFrameTag.data(), 4) == 0) {
    const Span frame{at, u32le(data + at + 4), u32le(data + at + 8)};
    if (size - at - kFrameEnvelopeBytes < frame.compressed) break;
    frames.push_back(frame);
    at += kFrameEnvelopeBytes + frame.compressed;
  }
  return frames;
}

// Replaces `frame`'s records by a mutation of them; 0 if it cannot.
std::size_t mutate_inside_frame(std::uint8_t* data, std::size_t size, std::size_t max_size, const Span& frame) {
  if (frame.decompressed > kMaxPayloadBytes) return 0;
  static ZSTD_DCtx* const dctx = ZSTD_createDCtx();
  static ZSTD_CCtx* const cctx = [] {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    return c;
  }();

  std::vector<std::uint8_t> payload(frame.decompressed + kGrowBytes);
  const std::size_t got = ZSTD_decompressDCtx(dctx, payload.data(), payload.size(),
                                              data + frame.offset + kFrameEnvelopeBytes, frame.compressed);
  if (ZSTD_isError(got) != 0) return 0;
  const std::size_t mutated = LLVMFuzzerMutate(payload.data(), got, payload.size());

  std::vector<std::uint8_t> compressed(ZSTD_compressBound(mutated));
  const std::size_t csize = ZSTD_compress2(cctx, compressed.data(), compressed.size(), payload.data(), mutated);
  if (ZSTD_isError(csize) != 0) return 0;

  const std::size_t tail_at = frame.offset + kFrameEnvelopeBytes + frame.compressed;
  const std::size_t tail = size - tail_at;
  const std::size_t out_size = frame.offset + kFrameEnvelopeBytes + csize + tail;
  if (out_size > max_size) return 0;
  // Move the frames after this one, then write the new envelope and payload.
  std::memmove(data + frame.offset + kFrameEnvelopeBytes + csize, data + tail_at, tail);
  put_u32le(data + frame.offset + 4, static_cast<std::uint32_t>(csize));
  put_u32le(data + frame.offset + 8, static_cast<std::uint32_t>(mutated));
  std::memcpy(data + frame.offset + kFrameEnvelopeBytes, compressed.data(), csize);
  return out_size;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::minstd_rand rng(seed);
  if (rng() % 2 == 0) {
    const std::vector<Span> frames = find_frames(data, size);
    if (!frames.empty()) {
      const std::size_t n = mutate_inside_frame(data, size, max_size, frames[rng() % frames.size()]);
      if (n != 0) return n;
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}
