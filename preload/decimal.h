// Decimal formatting without printf: the preload's messages, file names and
// option values are written from fixed buffers and must not allocate.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memrec::preload {

// Writes `v` in decimal to `out` (no terminator). Returns the digits written;
// at most `cap`, keeping the most significant ones.
inline std::size_t format_decimal(char* out, std::size_t cap, std::uint64_t v) {
  char digits[20];
  std::size_t n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  std::size_t written = 0;
  while (n > 0 && written < cap) out[written++] = digits[--n];
  return written;
}

}  // namespace memrec::preload
