// A dump followed while it is written: the file grows between steps, cut at
// frame boundaries and inside frames, and what the follower hands on over
// all its steps is what one load of the finished file hands on.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "load/dump_follower.h"
#include "load/ordered_events.h"
#include "support/growing_dump.h"

using namespace memrec;
using namespace memrec::analyzer;
using memrec::testing::cut_points;
using memrec::testing::DumpBuilder;
using memrec::testing::interleaved_dump;
using memrec::testing::temp_dump_path;
using memrec::testing::write_prefix;

namespace {

struct Seen {
  std::uint64_t time_ns;
  std::uint64_t addr;
  std::uint32_t thread;
  bool operator==(const Seen&) const = default;
};

struct RecordingSink final : OrderedEventSink {
  std::vector<Seen> seen;
  void on_event(const HeapEvent& e, std::uint32_t thread) override { seen.push_back({e.time_ns, e.addr, thread}); }
};

std::vector<Seen> load_at_once(const std::string& path) {
  RecordingSink sink;
  LoadOptions options{1};
  const auto streamed = stream_dump(path, options, sink);
  REQUIRE(streamed.ok());
  return sink.seen;
}

struct Followed {
  std::vector<Seen> seen;
  std::size_t restarts = 0;     // steps that met an event older than one handed on
  std::size_t grew_before = 0;  // steps before the last that handed events on
  bool finished = false;
  std::uint64_t frames = 0;
};

// Follows `path` while it grows from cut to cut; a step that meets an event
// too late starts over with a new follower and sink, as memrec view does.
Followed follow(const std::string& path, const DumpBuilder& b, const std::vector<std::size_t>& cuts,
                std::uint64_t hold_back_ns, bool finish_at_end,
                std::uint64_t held_in_memory = LoadOptions{}.held_in_memory) {
  Followed f;
  FollowOptions options;
  options.load.threads = 1;
  options.load.held_in_memory = held_in_memory;
  options.load.spill_dir = std::filesystem::temp_directory_path();
  options.hold_back_ns = hold_back_ns;
  auto sink = std::make_unique<RecordingSink>();
  auto follower = std::make_unique<DumpFollower>(path, options, *sink);
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    write_prefix(path, b.bytes(), cuts[k]);
    auto step = follower->step();
    if (!step.ok()) {
      REQUIRE(cuts[k] < b.header_bytes() + 1);  // only an empty file may not open
      continue;
    }
    REQUIRE(!step->error);
    if (step->out_of_order) {
      ++f.restarts;
      follower.reset();  // before its sink
      sink = std::make_unique<RecordingSink>();
      follower = std::make_unique<DumpFollower>(path, options, *sink);
      step = follower->step();
      REQUIRE(step.ok());
      REQUIRE(!step->out_of_order);
    }
    if (k + 1 < cuts.size() && step->events > 0) ++f.grew_before;
  }
  if (finish_at_end && !follower->finished()) follower->finish();
  f.finished = follower->finished();
  f.frames = follower->dump().facts.frames;
  f.seen = std::move(sink->seen);
  return f;
}

}  // namespace

TEST_SUITE("analyzer/dump_follower") {
  TEST_CASE("a dump followed as it grows hands on the events of one load of the finished file, in its order") {
    for (const unsigned seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
      const std::size_t threads = seed % 2 == 0 ? 1 : 5;
      CAPTURE(seed);
      const DumpBuilder b = interleaved_dump(seed, threads, /*end=*/true);
      const std::string path = temp_dump_path("follow");
      write_prefix(path, b.bytes(), b.bytes().size());
      const std::vector<Seen> expected = load_at_once(path);
      REQUIRE(expected.size() == 800);
      // Holding back nothing (a late event restarts), a little, and more than the whole run.
      for (const std::uint64_t hold_back_ns : {std::uint64_t{0}, std::uint64_t{20}, std::uint64_t{1'000'000}}) {
        CAPTURE(hold_back_ns);
        const Followed f = follow(path, b, cut_points(b), hold_back_ns, /*finish_at_end=*/false);
        CHECK(f.finished);  // the End record let every event go
        CHECK(f.frames == b.frame_offsets().size());
        REQUIRE(f.seen.size() == expected.size());
        CHECK(f.seen == expected);
        // One thread's frames never go back in time: nothing comes too late.
        if (threads == 1) CHECK(f.restarts == 0);
        // Figures grow while the file does, unless everything is held back.
        if (hold_back_ns == 0 && threads == 1) CHECK(f.grew_before > b.frame_offsets().size() / 2);
        if (hold_back_ns == 1'000'000) CHECK(f.grew_before == 0);
      }
      // With all but 4 held events waiting in the spill file between steps.
      const Followed spilled = follow(path, b, cut_points(b), 20, /*finish_at_end=*/false, 4);
      CHECK(spilled.seen == expected);
      std::filesystem::remove(path);
    }
  }

  TEST_CASE("a dump cut without an End record hands everything on once its follower is finished") {
    const DumpBuilder b = interleaved_dump(9, 4, /*end=*/false);
    const std::string path = temp_dump_path("follow-cut");
    // The finished file ends inside a frame, as SIGKILL leaves it.
    const std::size_t cut = (b.frame_offsets().back() + b.frame_ends().back()) / 2;
    write_prefix(path, b.bytes(), cut);
    const std::vector<Seen> expected = load_at_once(path);
    std::vector<std::size_t> cuts;
    for (const std::size_t c : cut_points(b)) {
      if (c <= cut) cuts.push_back(c);
    }
    const Followed f = follow(path, b, cuts, 20, /*finish_at_end=*/true);
    CHECK(f.frames == b.frame_offsets().size() - 1);
    REQUIRE(!expected.empty());
    CHECK(f.seen == expected);
    std::filesystem::remove(path);
  }

  TEST_CASE("a step reads only the frames appended since the last one") {
    const DumpBuilder b = interleaved_dump(4, 1, /*end=*/false);
    const std::string path = temp_dump_path("follow-only-new");
    RecordingSink sink;
    FollowOptions options;
    options.load.threads = 1;
    DumpFollower follower(path, options, sink);
    std::size_t frames = 0;
    for (std::size_t i = 0; i < b.frame_ends().size(); ++i) {
      write_prefix(path, b.bytes(), b.frame_ends()[i]);
      const auto step = follower.step();
      REQUIRE(step.ok());
      CHECK(step->frames == 1);
      CHECK(follower.offset() == b.frame_ends()[i]);
      frames += step->frames;
    }
    CHECK(frames == b.frame_offsets().size());
    CHECK(follower.dump().facts.frames == frames);
    CHECK(!follower.finished());
    std::filesystem::remove(path);
  }
}
