// MEMREC_ZSTD_LEVEL=auto's policy: up a level while compressing takes under an
// eighth of a frame's fill time and a level more for each halving beyond,
// down past a quarter (the writer is then busy) but not below the base, down
// to the floor when the program waited for a busy writer, never outside
// floor..top.
#include "auto_level.h"

#include <doctest/doctest.h>

using memrec::preload::AutoLevel;

TEST_SUITE("preload/auto_level") {
  TEST_CASE("climbs one level per idle frame up to the top, and stays there") {
    AutoLevel a;
    CHECK(a.level() == AutoLevel::kBase);
    for (int expected = AutoLevel::kBase + 1; expected <= AutoLevel::kTop; ++expected) {
      a.frame_done(1000, 124);  // under an eighth
      CHECK(a.level() == expected);
    }
    a.frame_done(1000, 0);
    CHECK(a.level() == AutoLevel::kTop);
  }

  TEST_CASE("climbs a level more for each halving of the time it took, straight to the top when idle") {
    AutoLevel a;
    a.frame_done(1000, 62);  // under an eighth, and under a sixteenth
    CHECK(a.level() == AutoLevel::kBase + 2);
    a.frame_done(1000, 63);  // under an eighth, not under a sixteenth
    CHECK(a.level() == AutoLevel::kBase + 3);
    a.frame_done(16000, 124);  // 992 < 16,000: under 1/8, 1/16, 1/32, 1/64 and 1/128
    CHECK(a.level() == AutoLevel::kBase + 8);
    AutoLevel idle;
    idle.frame_done(1'000'000, 0);  // nothing to compress: the top at once
    CHECK(idle.level() == AutoLevel::kTop);
    AutoLevel quiet;
    quiet.frame_done(1'000'000'000, 1000);  // a writer idle a million times over
    CHECK(quiet.level() == AutoLevel::kTop);
  }

  TEST_CASE("holds between an eighth and a quarter, and comes down past a quarter, not below the base") {
    AutoLevel a;
    a.frame_done(1000, 100);
    a.frame_done(1000, 100);
    REQUIRE(a.level() == AutoLevel::kBase + 2);
    a.frame_done(1000, 125);  // exactly an eighth: holds
    a.frame_done(1000, 250);  // exactly a quarter: holds
    CHECK(a.level() == AutoLevel::kBase + 2);
    a.frame_done(1000, 251);
    CHECK(a.level() == AutoLevel::kBase + 1);
    for (int i = 0; i < 5; ++i) a.frame_done(1000, 1000);
    CHECK(a.level() == AutoLevel::kBase);
  }

  TEST_CASE("the writer is busy after a frame that took over a quarter of its fill time to compress") {
    AutoLevel a;
    CHECK_FALSE(a.busy());
    a.frame_done(1000, 251);
    CHECK(a.busy());
    a.frame_done(1000, 250);
    CHECK_FALSE(a.busy());
    for (int i = 0; i < 10; ++i) a.frame_done(1000, 0);
    REQUIRE(a.level() == AutoLevel::kTop);
    // A wait for a busy writer: down to the floor at once, below the base,
    a.backpressure();
    CHECK(a.level() == AutoLevel::kFloor);
    // where a busy writer stays,
    a.frame_done(1000, 300);
    CHECK(a.level() == AutoLevel::kFloor);
    // and from where an idle one climbs again.
    a.frame_done(1000, 100);
    CHECK(a.level() == AutoLevel::kFloor + 1);
  }

  TEST_CASE("with a top at the base (one CPU) it never moves") {
    AutoLevel a(AutoLevel::kBase);
    for (int i = 0; i < 10; ++i) a.frame_done(1000, 0);
    CHECK(a.level() == AutoLevel::kBase);
  }
  TEST_CASE("a frame that filled while the process used every CPU drops to the floor, however idle the writer") {
    AutoLevel a;
    for (int i = 0; i < 10; ++i) a.frame_done(1000, 0);
    REQUIRE(a.level() == AutoLevel::kTop);
    a.frame_done(1000, 10, true);
    CHECK(a.level() == AutoLevel::kFloor);
    // It does not climb while the CPUs stay taken,
    a.frame_done(1'000'000, 0, true);
    CHECK(a.level() == AutoLevel::kFloor);
    // and climbs as before once one is spare.
    a.frame_done(1000, 100);
    CHECK(a.level() == AutoLevel::kFloor + 1);
  }
}
