// Decoders for the unit tests of compressed output (pprof's gzip, the
// exports' .gz and .zst files), by zlib's and zstd's own one-shot APIs, so a
// test never checks the encoder with itself. Output up to 64 MiB.
#pragma once

#include <doctest/doctest.h>
#include <zlib.h>
#include <zstd.h>

#include <string>

namespace memrec::test {

inline constexpr std::size_t kMaxDecompressedBytes = 64u << 20;

// One gzip member (RFC 1952), decoded whole.
inline std::string gunzip(const std::string& gz) {
  std::string out(kMaxDecompressedBytes, '\0');
  z_stream z{};
  REQUIRE(inflateInit2(&z, 15 + 16) == Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(gz.data()));
  z.avail_in = static_cast<uInt>(gz.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  REQUIRE(inflate(&z, Z_FINISH) == Z_STREAM_END);
  out.resize(z.total_out);
  inflateEnd(&z);
  return out;
}

// zstd frames, decoded whole (a streamed frame does not state its size).
inline std::string unzstd(const std::string& data) {
  std::string out(kMaxDecompressedBytes, '\0');
  const std::size_t n = ZSTD_decompress(out.data(), out.size(), data.data(), data.size());
  REQUIRE_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

}  // namespace memrec::test
