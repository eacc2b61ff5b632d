// MEMREC_ZSTD_LEVEL=auto, the default: the writer compresses harder while it
// has time to spare. Level 3 (zstd's default) compresses event columns at
// 400+ MB/s; level 7 at a third of that and level 12 at a fifth, for dumps
// 15-20 % smaller on programs whose writer idles (version 5's columns in
// 1 MiB frames, level 3 -> 12: sqlite3 198 -> 159 KB, cc1plus 6.7 -> 5.8
// MB). A program that allocates as
// fast as bench churn keeps the writer busy, so it stays at 3 and loses
// nothing. Header-only and allocation-free.
#pragma once

#include <cstdint>

namespace memrec::preload {

class AutoLevel {
 public:
  static constexpr int kFloor = 1;  // after the program waited for a busy writer
  static constexpr int kBase = 3;   // where it starts
  static constexpr int kTop = 12;

  constexpr AutoLevel() = default;
  // `top`: kBase on a machine where the writer's extra work would take a CPU
  // from the program (one CPU).
  explicit constexpr AutoLevel(int top) : top_(top < kBase ? kBase : top) {}

  constexpr int level() const { return level_; }

  // A frame that took `fill_ns` to fill took `compress_ns` to compress at
  // level(): one level up while that is under an eighth (the next level costs
  // at most about twice as much), and one more for each halving beyond, so
  // that a writer with time to spare reaches the top after one frame
  // (version 5's frames are fewer: sqlite3 writes 14, and climbing one level
  // a frame left several of them below the top); one down when it is over a
  // quarter, which also makes the writer busy().
  //
  // `no_spare_cpu`: the process kept every CPU it may run on busy while the
  // frame filled. The writer's time then is the program's time whether or
  // not the writer itself is busy, so the level drops to 1 as after
  // backpressure. Two program threads on two CPUs: each pool writer's frames
  // fill slowly, so by the rule above it climbed to level 7-12 and took a
  // third more CPU than level 1 from the program (churn-2t).
  constexpr void frame_done(std::uint64_t fill_ns, std::uint64_t compress_ns, bool no_spare_cpu = false) {
    busy_ = compress_ns * 4 > fill_ns;
    if (no_spare_cpu) {
      level_ = kFloor;
    } else if (compress_ns == 0) {
      level_ = top_;
    } else if (compress_ns * 8 < fill_ns) {
      for (std::uint64_t cost = compress_ns * 8; cost < fill_ns && level_ < top_; cost *= 2) ++level_;
    } else if (busy_ && level_ > kBase) {
      --level_;  // below the base only by backpressure()
    }
  }

  // Whether compressing took the writer more than a quarter of the last
  // frame's fill time: then a program that waited for room waited for the
  // compression (see writer.cpp). Otherwise it waited for a writer that
  // slept through the start of a burst (sqlite3: 3-18 waits in 0.7 s, the
  // writer idle 95 % of the time), which a lower level would not have helped.
  constexpr bool busy() const { return busy_; }

  // The program waited for a busy writer: down to level 1, about half of
  // level 3's time for nearly the same size on event columns (bench churn's
  // are even 1 % smaller; cc1plus's and python3's 4-5 % larger), from where
  // frames climb again as the writer's time allows. It used to go back up to
  // the base at the next frame, and churn-2t, whose writer is the
  // bottleneck, spent most frames at level 3.
  constexpr void backpressure() { level_ = kFloor; }

 private:
  int top_ = kTop;
  int level_ = kBase;
  bool busy_ = false;
};

}  // namespace memrec::preload
