// SinkThread: the target sees every event in order with its thread, across
// batches; what it throws comes back from finish(); it runs at the caller's
// priority (the view's table is as serial as the replay).
#include "load/sink_thread.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <new>
#include <utility>
#include <vector>

namespace memrec::analyzer {
namespace {

struct Recording final : OrderedEventSink {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> seen;  // (time, thread)
  std::size_t throw_at = ~std::size_t{0};
  int nice = 0;
  void on_event(const HeapEvent& e, std::uint32_t thread) override {
    if (seen.size() == throw_at) throw std::bad_alloc();
    if (seen.empty()) nice = getpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)));
    seen.emplace_back(e.time_ns, thread);
  }
};

HeapEvent at(std::uint64_t t) { return HeapEvent{t, 0x1000 + t * 16, 8, {}, HeapOp::kAlloc, false}; }

TEST_SUITE("analyzer/sink_thread") {
  TEST_CASE("the target gets every event in order, with its thread, across batches") {
    Recording target;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> sent;
    {
      SinkThread sink(target);
      std::uint64_t t = 0;
      for (int round = 0; round < 40; ++round) {
        // Single events, then runs longer than a batch, from three threads.
        for (int i = 0; i < 1000; ++i, ++t) {
          sink.on_event(at(t), static_cast<std::uint32_t>(i % 3));
          sent.emplace_back(t, i % 3);
        }
        std::vector<HeapEvent> run;
        for (int i = 0; i < 50000; ++i) run.push_back(at(t + static_cast<std::uint64_t>(i)));
        sink.on_events(run, static_cast<std::uint32_t>(round % 2));
        for (int i = 0; i < 50000; ++i, ++t) sent.emplace_back(t, round % 2);
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
    for (std::uint64_t t = 0; t < 200000; ++t) sink.on_event(at(t), 0);
    CHECK_THROWS_AS(sink.finish(), std::bad_alloc);
    CHECK(target.seen.size() == 40000);
  }

  TEST_CASE("a sink dropped without finish() ends its thread") {
    Recording target;
    {
      SinkThread sink(target);
      for (std::uint64_t t = 0; t < 100000; ++t) sink.on_event(at(t), 0);
    }
    CHECK(target.seen.size() <= 100000);
  }
}

}  // namespace
}  // namespace memrec::analyzer
