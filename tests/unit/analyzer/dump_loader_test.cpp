// The load's hooks for work that starts before it ends: each frame's Stack
// records reach LoadOptions::on_stacks with the modules of that frame, off the
// loading thread; the decoding threads run at the helpers' lower priority;
// progress counts up to its total.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "load/dump_loader.h"
#include "load/helper_priority.h"
#include "load/ordered_events.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::analyzer;
using format::AllocFn;
using memrec::testing::DumpBuilder;

namespace {

constexpr std::uint64_t kT0 = 1'000'000;  // sample_header's start_mono_ns

int nice_of_this_thread() { return getpriority(PRIO_PROCESS, static_cast<id_t>(gettid())); }

// Frame 1 loads module 1 and defines stacks 1 and 2; frame 2 loads module 2
// and defines stack 3; frame 3 defines none.
DumpBuilder three_frames() {
  DumpBuilder b;
  const format::Segment segs[] = {{0x0, 0x10000, 0, format::kSegmentExec | format::kSegmentRead}};
  const std::uint64_t s1[] = {0x400010, 0x400020};
  const std::uint64_t s2[] = {0x400030};
  const std::uint64_t s3[] = {0x500010, 0x400020};
  b.frame([&](format::RecordEncoder& e) {
    e.module_load(1, 1, "/tmp/one", 0x400000, {}, segs);
    e.stack(1, 1, 0, s1);
    e.stack(2, 1, 0, s2);
    e.thread(7);
    e.alloc(AllocFn::kMalloc, kT0 + 1, 0x1000, 16, 1);
  });
  b.frame([&](format::RecordEncoder& e) {
    e.module_load(2, 2, "/tmp/two", 0x500000, {}, segs);
    e.stack(3, 2, 0, s3);
    e.thread(7);
    e.alloc(AllocFn::kMalloc, kT0 + 2, 0x2000, 32, 3);
  });
  b.frame([&](format::RecordEncoder& e) {
    e.thread(7);
    e.free(kT0 + 3, 0x1000);
  });
  return b;
}

// More frames than one worker may decode ahead of the loading thread (4 per
// worker), so that the worker is still alive when the first frame is folded.
DumpBuilder many_frames() {
  DumpBuilder b = three_frames();
  for (std::uint64_t i = 0; i < 8; ++i) {
    b.frame([&](format::RecordEncoder& e) {
      e.thread(7);
      e.alloc(AllocFn::kMalloc, kT0 + 10 + i, 0x3000 + 0x100 * i, 8, 1);
    });
  }
  return b;
}

}  // namespace

TEST_SUITE("analyzer/dump_loader") {
  TEST_CASE("hands each frame's stacks to on_stacks with that frame's modules, off the loading thread") {
    const DumpBuilder b = three_frames();
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "three.dat"));
    REQUIRE(dump.ok());
    struct Call {
      std::vector<std::uint32_t> ids;
      std::vector<std::uint64_t> first_ips;
      std::vector<std::string> modules;
    };
    std::vector<Call> calls;  // on_stacks runs on one thread, joined before the load returns
    const std::thread::id loader = std::this_thread::get_id();
    bool off_loader = true;
    LoadOptions options{2};
    options.on_stacks = [&](std::span<const ModuleInfo> modules, std::span<const reader::StackRecord> stacks) {
      off_loader = off_loader && std::this_thread::get_id() != loader;
      Call c;
      for (const ModuleInfo& m : modules) c.modules.push_back(m.path);
      for (const reader::StackRecord& s : stacks) {
        c.ids.push_back(s.id.value);
        c.first_ips.push_back(s.ips.at(0));
      }
      calls.push_back(c);
    };
    auto loaded = load_dump(std::move(*dump), options);
    REQUIRE(loaded.ok());
    CHECK(off_loader);
    REQUIRE(calls.size() == 2);  // the third frame has no stacks
    CHECK(calls[0].ids == std::vector<std::uint32_t>{1, 2});
    CHECK(calls[0].first_ips == std::vector<std::uint64_t>{0x400010, 0x400030});
    CHECK(calls[0].modules == std::vector<std::string>{"/tmp/one"});
    CHECK(calls[1].ids == std::vector<std::uint32_t>{3});
    CHECK(calls[1].modules == std::vector<std::string>{"/tmp/one", "/tmp/two"});
    // The stacks still reach the table whole.
    CHECK(loaded->stacks.size() == 3);
  }

  TEST_CASE("a streamed load's progress only grows, and ends at its total") {
    // These frames carry no note of their earliest time: the first pass scans
    // each, a step as a frame of the second pass is (a noted frame is none).
    struct Sink final : OrderedEventSink {
      void on_event(const HeapEvent&, std::uint32_t) override {}
    } sink;
    const DumpBuilder b = many_frames();
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "many.dat"));
    REQUIRE(dump.ok());
    std::vector<std::pair<std::size_t, std::size_t>> calls;
    LoadOptions options{1};
    options.progress = [&](std::size_t done, std::size_t total) { calls.emplace_back(done, total); };
    REQUIRE(stream_dump(std::move(*dump), options, sink).ok());
    REQUIRE(!calls.empty());
    const std::size_t frames = b.frame_offsets().size();
    for (std::size_t i = 0; i < calls.size(); ++i) {
      CAPTURE(i);
      CHECK(calls[i].second == 2 * frames);
      CHECK(calls[i].first <= calls[i].second);
      if (i > 0) CHECK(calls[i].first >= calls[i - 1].first);
    }
    CHECK(calls.back().first == 2 * frames);
  }

  TEST_CASE("the decoding threads run at the helpers' nice value, the loading thread at its own") {
    const int before = nice_of_this_thread();
    REQUIRE(before < kHelperNice);  // else there is nothing to see
    const DumpBuilder b = many_frames();
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "many.dat"));
    REQUIRE(dump.ok());
    std::multiset<int> others;
    int loader = 0;
    LoadOptions options{1};
    options.progress = [&](std::size_t, std::size_t) {
      if (!others.empty()) return;
      // The frame just folded was decoded on the worker, which lowered itself
      // first and waits for room; the stack builder may not have started.
      loader = nice_of_this_thread();
      for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
        const auto tid = static_cast<id_t>(std::stoul(task.path().filename().string()));
        if (tid != static_cast<id_t>(gettid())) others.insert(getpriority(PRIO_PROCESS, tid));
      }
    };
    REQUIRE(load_dump(std::move(*dump), options).ok());
    CHECK(loader == before);
    CHECK(others.count(kHelperNice) >= 1);
    CHECK(others.count(kHelperNice) + others.count(before) == others.size());
    CHECK(nice_of_this_thread() == before);
  }
}
