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

  constexpr AutoLevel() = default;
  // `top`: kBase on a machine where the writer's extra work would take a CPU
  // from the program (one CPU).
  explicit constexpr AutoLevel(int top) : top_(top < kBase ? kBase : top) {}

  constexpr int level() const { return level_; }

  // A frame that took `fill_ns` to fill took `compress_ns` to compress at
  // level(): one level up while that is under an eighth (the next level costs
  // at most about twice as much), one down when it is over a quarter, which
  // also makes the writer busy().
  constexpr void frame_done(std::uint64_t fill_ns, std::uint64_t compress_ns) {
    busy_ = compress_ns * 4 > fill_ns;
    if (compress_ns * 8 < fill_ns && level_ < top_) {
      ++level_;
    } else if (busy_ && level_ > kBase) {
      --level_;
    }
  }

  // Whether compressing took the writer more than a quarter of the last
  // frame's fill time: then a program that waited for room waited for the
  // compression, and the next frame is compressed at level 1 (see
  // writer.cpp). Otherwise it waited for a writer that slept through the
  // start of a burst (sqlite3: 3-18 waits in 0.7 s, the writer idle 95 % of
  // the time), which a lower level would not have helped.
  constexpr bool busy() const { return busy_; }

  // The program waited for a busy writer: back to the base level.
  constexpr void backpressure() { level_ = kBase; }

 private:
  int top_ = kTop;
  int level_ = kBase;
  bool busy_ = false;
};

}  // namespace memrec::preload
