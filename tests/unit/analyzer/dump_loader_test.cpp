// The load's hooks for work that starts before it ends: the addresses each
// frame's Stack records use first reach LoadOptions::on_addresses with the
// modules of that frame, off the loading thread; the decoding threads run at the helpers' lower priority;
// progress counts up to its total.
#include <doctest/doctest.h>

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "load/dump_loader.h"
#include "load/helper_priority.h"
#include "load/ordered_events.h"
#include "load/stream_merger.h"
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
  TEST_CASE(
      "hands each frame's new stack addresses to on_addresses with that frame's modules, off the loading thread") {
    const DumpBuilder b = three_frames();
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "three.dat"));
    REQUIRE(dump.ok());
    struct Call {
      std::vector<std::pair<std::uint64_t, std::uint64_t>> addresses;  // ip, module generation
      std::vector<std::string> modules;
    };
    std::vector<Call> calls;  // on_addresses runs on one thread, joined before the load returns
    const std::thread::id loader = std::this_thread::get_id();
    bool off_loader = true;
    LoadOptions options{2};
    options.on_addresses = [&](std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses) {
      off_loader = off_loader && std::this_thread::get_id() != loader;
      Call c;
      for (const ModuleInfo& m : modules) c.modules.push_back(m.path);
      for (const StackAddress& a : addresses) c.addresses.emplace_back(a.ip, a.module_gen);
      calls.push_back(c);
    };
    auto loaded = load_dump(std::move(*dump), options);
    REQUIRE(loaded.ok());
    CHECK(off_loader);
    REQUIRE(calls.size() == 2);  // the third frame has no stacks
    // Outermost first within a stack, each address once over the load.
    using Seen = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
    CHECK(calls[0].addresses == Seen{{0x400020, 1}, {0x400010, 1}, {0x400030, 1}});
    CHECK(calls[0].modules == std::vector<std::string>{"/tmp/one"});
    CHECK(calls[1].addresses == Seen{{0x500010, 2}});  // 0x400020 came before
    CHECK(calls[1].modules == std::vector<std::string>{"/tmp/one", "/tmp/two"});
    // The stacks still reach the table whole.
    REQUIRE(loaded->stacks.size() == 3);
    CHECK(loaded->stacks.ips(*loaded->stacks.find(StackId{3})) == std::vector<std::uint64_t>{0x500010, 0x400020});
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

  TEST_CASE("a streamed load hands every event on in the order of one merge of the whole threads") {
    // Threads' events interleave in time but reach frames in batches per
    // thread, as the writer drains them: a batch may run ahead of another
    // thread's next one, so events wait for later frames, some for several
    // (a whole frame at one time, ties across frames). What the releases
    // hand on, in pieces, must be what one merge of each thread's whole
    // sequence gives. With one thread as well, whose releases hand on the
    // held end of one frame and the start of the next in one go; and with
    // forty, most of them holding events at any time.
    for (const unsigned seed : {1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u, 9u}) {
      constexpr std::size_t kMaxThreads = 40;
      const std::size_t threads = seed % 3 == 0 ? 1 : seed % 3 == 1 ? 3 : kMaxThreads;
      CAPTURE(seed);
      std::mt19937 rng(seed);
      std::vector<std::uint64_t> tids(kMaxThreads);
      for (std::size_t t = 0; t < kMaxThreads; ++t) tids[t] = 7 + t;
      std::vector<std::vector<HeapEvent>> sequences(kMaxThreads);  // by tid index
      std::uint64_t now = kT0;
      for (std::uint64_t i = 0; i < 600; ++i) {
        now += rng() % 3 == 0 ? 1 : 0;  // ties are common
        const std::size_t t = rng() % threads;
        const std::uint64_t addr = 0x10000 + 0x40 * (rng() % 64);
        const HeapOp op = rng() % 2 == 0 ? HeapOp::kAlloc : HeapOp::kFree;
        sequences[t].push_back(
            {now, addr, op == HeapOp::kAlloc ? 32u : 0u, StackId{op == HeapOp::kAlloc ? 1u : 0u}, op});
      }
      DumpBuilder b;
      std::vector<std::size_t> next(kMaxThreads, 0);
      std::vector<std::size_t> first_seen;  // tid indexes in first-appearance order
      const auto unwritten = [&] {
        for (std::size_t t = 0; t < kMaxThreads; ++t) {
          if (next[t] < sequences[t].size()) return true;
        }
        return false;
      };
      while (unwritten()) {
        b.frame([&](format::RecordEncoder& e) {
          for (std::size_t k = 0; k < (threads == kMaxThreads ? 6u : 3u); ++k) {
            const std::size_t t = rng() % threads;
            const std::size_t n = std::min<std::size_t>(rng() % 20, sequences[t].size() - next[t]);
            if (n == 0) continue;
            e.thread(tids[t]);
            if (std::find(first_seen.begin(), first_seen.end(), t) == first_seen.end()) first_seen.push_back(t);
            for (std::size_t j = 0; j < n; ++j) {
              const HeapEvent& ev = sequences[t][next[t]++];
              if (ev.op == HeapOp::kAlloc) {
                e.alloc(AllocFn::kMalloc, ev.time_ns, ev.addr, ev.size, 1);
              } else {
                e.free(ev.time_ns, ev.addr);
              }
            }
          }
        });
      }
      // The reference: the streams in the loader's thread order.
      std::vector<std::vector<HeapEvent>> streams;
      for (const std::size_t t : first_seen) streams.push_back(sequences[t]);
      struct Seen {
        std::uint64_t time_ns;
        std::uint64_t addr;
        std::uint32_t thread;
        bool operator==(const Seen&) const = default;
      };
      std::vector<Seen> expected;
      StreamMerger merger{std::span<const std::vector<HeapEvent>>(streams)};
      std::size_t stream = 0;
      while (const HeapEvent* e = merger.next(&stream)) {
        expected.push_back({e->time_ns, e->addr, static_cast<std::uint32_t>(stream)});
      }
      // Held in memory, and with all but 4 held events in the spill file.
      for (const std::uint64_t held_in_memory : {LoadOptions{}.held_in_memory, std::uint64_t{4}}) {
        CAPTURE(held_in_memory);
        struct Sink final : OrderedEventSink {
          std::vector<Seen> seen;
          void on_event(const HeapEvent& e, std::uint32_t thread) override {
            seen.push_back({e.time_ns, e.addr, thread});
          }
        } sink;
        auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "threads.dat"));
        REQUIRE(dump.ok());
        LoadOptions options{1};
        options.held_in_memory = held_in_memory;
        options.spill_dir = std::filesystem::temp_directory_path();
        const auto streamed = stream_dump(std::move(*dump), options, sink);
        REQUIRE(streamed.ok());
        REQUIRE(b.frame_offsets().size() > 15);
        REQUIRE(sink.seen.size() == expected.size());
        CHECK(sink.seen == expected);
        if (held_in_memory == 4 && threads == kMaxThreads) CHECK(streamed->spilled > 0);
      }
    }
  }

  TEST_CASE("events held back past the memory budget wait in a file, and memory holds the budget, not the dump") {
    // given 40 threads of 500 events each, interleaved in time (thread t's
    // i-th at kT0 + 1 + 40 i + t), written thread after thread in frames of
    // 100: each frame waits for the next thread's first event, so nearly the
    // whole dump is held back at the end, as when the recorder drained
    // thousands of threads long after they allocated
    constexpr std::uint64_t kThreads = 40;
    constexpr std::uint64_t kEach = 500;
    DumpBuilder b;
    for (std::uint64_t t = 0; t < kThreads; ++t) {
      for (std::uint64_t from = 0; from < kEach; from += 100) {
        b.frame([&](format::RecordEncoder& e) {
          e.thread(100 + t);
          for (std::uint64_t i = from; i < from + 100; ++i) {
            e.alloc(AllocFn::kMalloc, kT0 + 1 + kThreads * i + t, 0x100000 * (t + 1) + 16 * i, 16, 1);
          }
        });
      }
    }
    struct Sink final : OrderedEventSink {
      std::vector<std::uint64_t> times;
      std::uint64_t out_of_order = 0;
      void on_event(const HeapEvent& e, std::uint32_t) override {
        if (!times.empty() && e.time_ns <= times.back()) ++out_of_order;
        times.push_back(e.time_ns);
      }
    } sink;
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "crowd.dat"));
    REQUIRE(dump.ok());
    // when it streams with room for 1000 events in memory
    LoadOptions options{1};
    options.held_in_memory = 1000;
    options.spill_dir = std::filesystem::temp_directory_path();
    const auto streamed = stream_dump(std::move(*dump), options, sink);
    REQUIRE(streamed.ok());
    // then every event comes out once, in time order (no two share a time)
    CHECK(sink.times.size() == kThreads * kEach);
    CHECK(sink.out_of_order == 0);
    CHECK(streamed->max_pending >= (kThreads - 1) * kEach);
    // and memory held up to twice the budget (the events read back take the
    // second half), a frame and the least read-back of each thread at most
    // beyond it, while the file held the rest
    CHECK(streamed->max_in_memory <= 2 * 1000 + 100 + 16 * kThreads);
    CHECK(streamed->spilled >= (kThreads - 2) * kEach);
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
