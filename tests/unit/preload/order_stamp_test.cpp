// Order stamps (order_stamp.h): what makes events sort in the order they
// happened across threads, and what each way of stamping promises the other
// when threads start and are retired.
#include "order_stamp.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

using namespace memrec::preload;

namespace {

// Sets the recorder's shared state and this thread's as a test needs it:
// a writer ticking (`ticking`) or none yet.
void set_state(std::uint32_t threads, bool ticking = true) {
  g_recording_threads.store(threads);
  g_ticking.store(ticking);
  t_thread.last_stamp = 0;
}

// The first stamp of a thread that starts recording as the second one.
std::uint64_t stamp_of_a_second_thread() {
  std::uint64_t second = 0;
  std::thread([&] {
    g_recording_threads.fetch_add(1);
    t_thread.last_stamp = 0;
    second = order_stamp();
  }).join();
  return second;
}

}  // namespace

TEST_SUITE("preload/order_stamp") {
  TEST_CASE("a thread recording alone takes the tick, and takes nothing from the shared counter") {
    set_state(1);
    const std::uint64_t tick = publish_tick();
    const std::uint64_t counter = g_stamp.load();
    CHECK(order_stamp() == tick);
    CHECK(order_stamp() == tick);
    CHECK(g_stamp.load() == counter);
  }

  TEST_CASE("the first stamp of a second thread sorts after what the first did alone") {
    // given an event stamped while one thread recorded
    set_state(1);
    publish_tick();
    const std::uint64_t alone = order_stamp();
    // when a second thread starts recording and stamps an event
    const std::uint64_t second = stamp_of_a_second_thread();
    // then its event comes strictly later: at equal times a free would sort
    // before the allocation it may have freed
    CHECK(second > alone);
    // and so does the first thread's next event
    CHECK(order_stamp() > second);
  }

  TEST_CASE("before any writer ticks, a lone thread's stamps follow the clock") {
    set_state(1, /*ticking=*/false);
    const std::uint64_t before = now_ns();
    const std::uint64_t first = order_stamp();
    const timespec pause{0, 2000000};
    nanosleep(&pause, nullptr);
    const std::uint64_t second = order_stamp();
    CHECK(first >= before);
    CHECK(second >= first + 2000000);
  }

  TEST_CASE("before any writer ticks, a second thread's first stamp sorts after the first thread's") {
    set_state(1, /*ticking=*/false);
    const std::uint64_t alone = order_stamp();
    CHECK(stamp_of_a_second_thread() > alone);
    set_state(1);
  }

  TEST_CASE("threads recording at once take distinct stamps, each thread's rising") {
    set_state(4);
    constexpr int kThreads = 4;
    constexpr int kEach = 100000;
    std::vector<std::vector<std::uint64_t>> stamps(kThreads);
    std::vector<std::thread> running;
    for (int i = 0; i < kThreads; ++i) {
      running.emplace_back([&stamps, i] {
        t_thread.last_stamp = 0;
        stamps[i].reserve(kEach);
        for (int k = 0; k < kEach; ++k) stamps[i].push_back(order_stamp());
      });
    }
    for (std::thread& t : running) t.join();
    std::vector<std::uint64_t> all;
    for (const auto& s : stamps) {
      CHECK(std::is_sorted(s.begin(), s.end()));
      all.insert(all.end(), s.begin(), s.end());
    }
    std::sort(all.begin(), all.end());
    CHECK(std::adjacent_find(all.begin(), all.end()) == all.end());
  }

  TEST_CASE("after a thread is retired, a thread left alone sorts after everything it stamped") {
    // given a second thread's events, stamped from the shared counter
    set_state(2);
    std::uint64_t newest = 0;
    std::thread([&] {
      t_thread.last_stamp = 0;
      for (int k = 0; k < 1000; ++k) newest = order_stamp();
    }).join();
    // when the writer retires it (retire_buffer: a tick, then one thread fewer)
    publish_tick();
    g_recording_threads.fetch_sub(1);
    // then the thread left alone stamps its next event after all of them
    CHECK(order_stamp() > newest);
  }

  TEST_CASE("a thread's stamps never go backwards") {
    set_state(1);
    const std::uint64_t tick = publish_tick();
    t_thread.last_stamp = tick + 5000;
    CHECK(order_stamp() == tick + 5000);
  }

  TEST_CASE("a tick is past the clock and every stamp before it") {
    set_state(2);
    const std::uint64_t before = order_stamp();
    const std::uint64_t clock = now_ns() & ~(kTickGridNs - 1);
    const std::uint64_t tick = publish_tick();
    CHECK(tick > before);
    CHECK(tick > clock);
    CHECK(g_tick_ns.load() == tick);
    // stamps run ahead of the clock by one per event, and the next tick
    // still goes past them
    g_stamp.fetch_add(1'000'000);
    CHECK(publish_tick() > tick + 1'000'000);
  }
  TEST_CASE("a marker's stamp is after a lone thread's earlier events and before its later ones") {
    set_state(1);
    const std::uint64_t tick = publish_tick();
    const std::uint64_t before = order_stamp();
    const std::uint64_t marker = unique_stamp();
    const std::uint64_t after = order_stamp();  // the same tick: no writer cycle between
    CHECK(before == tick);
    CHECK(before < marker);
    CHECK(marker < after);
    // A second marker at once is unique too, and another thread's next stamp sorts after both.
    const std::uint64_t second = unique_stamp();
    CHECK(after < second);
    CHECK(stamp_of_a_second_thread() > second + 1);
  }

  TEST_CASE("a marker's stamp is unique among threads sharing the counter") {
    set_state(2);
    const std::uint64_t a = order_stamp();
    const std::uint64_t m = unique_stamp();
    const std::uint64_t b = order_stamp();
    CHECK(a < m);
    CHECK(m < b);
  }

  // The same promises when the TSC stamps (MEMREC_STAMP=tsc): ticks and
  // stamps are then readings, and later ones are larger.
  TEST_CASE("with the TSC, a lone thread takes the tick and a second thread's first stamp sorts after it") {
    if (!kHaveTsc) return;
    g_stamp_tsc.store(true);
    g_tick_ns.store(0);  // the counter's ticks are ns, not readings
    set_state(1);
    const std::uint64_t counter = g_stamp.load();
    const std::uint64_t tick = publish_tick();
    CHECK(order_stamp() == tick);
    const std::uint64_t second = stamp_of_a_second_thread();
    CHECK(second > tick);
    CHECK(g_stamp.load() == counter);  // nothing shared was written
    g_recording_threads.store(2);
    CHECK(order_stamp() > second);
    g_stamp_tsc.store(false);
  }

  TEST_CASE("with the TSC, each thread's stamps rise, and a stamp after a join passes all of the joined thread's") {
    if (!kHaveTsc) return;
    g_stamp_tsc.store(true);
    g_tick_ns.store(0);  // the counter's ticks are ns, not readings
    set_state(4);
    constexpr int kThreads = 4;
    std::vector<std::vector<std::uint64_t>> stamps(kThreads);
    std::vector<std::thread> running;
    for (int i = 0; i < kThreads; ++i) {
      running.emplace_back([&stamps, i] {
        t_thread.last_stamp = 0;
        for (int k = 0; k < 100000; ++k) stamps[i].push_back(order_stamp());
      });
    }
    for (std::thread& t : running) t.join();
    const std::uint64_t after = order_stamp();
    for (const auto& s : stamps) {
      CHECK(std::is_sorted(s.begin(), s.end()));
      CHECK(after > s.back());
    }
    // and when the writer retires the threads, a thread left alone sorts after them
    const std::uint64_t tick = publish_tick();
    g_recording_threads.store(1);
    CHECK(order_stamp() == tick);
    CHECK(tick > after);
    g_stamp_tsc.store(false);
  }

  TEST_CASE("with the TSC, a marker's stamp is after a lone thread's earlier events and before its later ones") {
    if (!kHaveTsc) return;
    g_stamp_tsc.store(true);
    g_tick_ns.store(0);  // the counter's ticks are ns, not readings
    set_state(1);
    publish_tick();
    const std::uint64_t before = order_stamp();
    const std::uint64_t marker = unique_stamp();
    const std::uint64_t after = order_stamp();
    CHECK(before < marker);
    CHECK(marker < after);
    CHECK(stamp_of_a_second_thread() > marker);
    g_stamp_tsc.store(false);
  }
}
