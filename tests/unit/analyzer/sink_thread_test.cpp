// SinkThread: the target sees every event in order with its thread and tag,
// across batches; what it throws comes back from finish(); it runs at the caller's
// priority (the view's table is as serial as the replay).
#include "load/sink_thread.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>
#include <tuple>
#include <utility>
#include <vector>

namespace memrec::analyzer {
namespace {

using Seen = std::tuple<std::uint64_t, std::uint32_t, std::uint32_t>;  // (time, thread, tag)

struct Recording final : TaggedEventSink {
  std::vector<Seen> seen;
  std::size_t throw_at = ~std::size_t{0};
  int nice = 0;
  void on_tagged_events(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                        std::uint32_t thread) override {
    REQUIRE(tags.size() == events.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
      if (seen.size() == throw_at) throw std::bad_alloc();
      if (seen.empty()) nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
      seen.emplace_back(events[i].time_ns, thread, tags[i]);
    }
  }
};

HeapEvent at(std::uint64_t t) { return HeapEvent{t, 0x1000 + t * 16, 8, {}, HeapOp::kAlloc, false}; }
std::uint32_t tag_of(std::uint64_t t) { return static_cast<std::uint32_t>(t * 2654435761u); }

// One event, as the replay's tee hands on a single event.
void send(SinkThread& sink, std::uint64_t t, std::uint32_t thread) {
  const HeapEvent e = at(t);
  const std::uint32_t tag = tag_of(t);
  sink.on_tagged_events({&e, 1}, {&tag, 1}, thread);
}

TEST_SUITE("analyzer/sink_thread") {
  TEST_CASE("the target gets every event in order, with its thread, across batches") {
    Recording target;
    std::vector<Seen> sent;
    {
      SinkThread sink(target);
      std::uint64_t t = 0;
      for (int round = 0; round < 40; ++round) {
        // Single events, then runs longer than a batch, from three threads.
        for (int i = 0; i < 1000; ++i, ++t) {
          send(sink, t, static_cast<std::uint32_t>(i % 3));
          sent.emplace_back(t, i % 3, tag_of(t));
        }
        std::vector<HeapEvent> run;
        std::vector<std::uint32_t> tags;
        for (int i = 0; i < 50000; ++i) {
          run.push_back(at(t + static_cast<std::uint64_t>(i)));
          tags.push_back(tag_of(t + static_cast<std::uint64_t>(i)));
        }
        sink.on_tagged_events(run, tags, static_cast<std::uint32_t>(round % 2));
        for (int i = 0; i < 50000; ++i, ++t) sent.emplace_back(t, round % 2, tag_of(t));
      }
      sink.finish();
      CHECK(target.seen.size() == sent.size());  // read only after finish()
    }
    CHECK(target.seen == sent);
    CHECK(target.nice == getpriority(PRIO_PROCESS, 0));
  }

  TEST_CASE("what the target throws comes back from finish(), and it takes no more") {
    Recording target;
    target.throw_at = 40000;
    SinkThread sink(target);
    for (std::uint64_t t = 0; t < 200000; ++t) send(sink, t, 0);
    CHECK_THROWS_AS(sink.finish(), std::bad_alloc);
    CHECK(target.seen.size() == 40000);
  }

  TEST_CASE("a sink dropped without finish() ends its thread") {
    Recording target;
    {
      SinkThread sink(target);
      for (std::uint64_t t = 0; t < 100000; ++t) send(sink, t, 0);
    }
    CHECK(target.seen.size() <= 100000);
  }
}

}  // namespace
}  // namespace memrec::analyzer
