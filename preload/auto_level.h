// MEMREC_ZSTD_LEVEL=auto, the default: the writer compresses harder while it
// has time to spare. Level 3 (zstd's default) compresses event columns at
// 400+ MB/s; level 7 at a third of that, for dumps 10-15 % smaller on
// programs whose writer idles (cc1plus 8.1 -> 7.3 MB, sqlite3 198 -> 166 KB).
// A program that allocates as fast as bench churn keeps the writer busy, so it
// stays at 3 and loses nothing. Header-only and allocation-free.
#pragma once

#include <cstdint>

namespace memrec::preload {

class AutoLevel {
 public:
  static constexpr int kBase = 3;
  static constexpr int kTop = 7;

  // `top`: kTop, or kBase on a machine where the writer's extra work would
  // take a CPU from the program (one CPU).
  explicit constexpr AutoLevel(int top = kTop) : top_(top < kBase ? kBase : top) {}

  constexpr int level() const { return level_; }

  // A frame that took `fill_ns` to fill took `compress_ns` to compress at
  // level(): one level up while that is under an eighth (the next level costs
  // at most about twice as much), one down when it is over a quarter.
  constexpr void frame_done(std::uint64_t fill_ns, std::uint64_t compress_ns) {
    if (compress_ns * 8 < fill_ns && level_ < top_) {
      ++level_;
    } else if (compress_ns * 4 > fill_ns && level_ > kBase) {
      --level_;
    }
  }

  // The program waited for the writer: one level down. Not straight back to
  // the base: a program that starts a burst after a quiet spell waits once
  // for a writer that slept, whatever the level (sqlite3: 9 waits in 0.7 s).
  constexpr void backpressure() {
    if (level_ > kBase) --level_;
  }

 private:
  int top_;
  int level_ = kBase;
};

}  // namespace memrec::preload
