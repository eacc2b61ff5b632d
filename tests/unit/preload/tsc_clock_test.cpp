// The TSC-to-ns map (tsc_clock.h): one non-decreasing function for every
// writer, even while the main writer adds segments, exact at its start, and
// steered onto CLOCK_MONOTONIC.
#include "tsc_clock.h"

#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "clock.h"

using namespace memrec::preload;

namespace {

// The TSC's rate over `ns` of spinning.
double measured_rate(std::uint64_t ns) {
  const ClockPair a = read_clock_pair();
  ClockPair b;
  do {
    b = read_clock_pair();
  } while (b.ns < a.ns + ns);
  return static_cast<double>(b.ns - a.ns) / static_cast<double>(b.tsc - a.tsc);
}

// Steers the map (as the main writer does at its ticks) until it has `n` segments.
void steer_until(std::uint64_t n) {
  while (tsc_map_segments() < n) {
    tsc_map_steer();
    std::this_thread::yield();
  }
}

}  // namespace

TEST_SUITE("preload/tsc_clock") {
  TEST_CASE("the map gives the start's clock reading at the start's TSC reading") {
    if (!kHaveTsc) return;
    const ClockPair origin = read_clock_pair();
    tsc_map_start(origin, measured_rate(1'000'000));
    CHECK(tsc_map_segments() == 1);
    CHECK(tsc_to_ns(origin.tsc) == origin.ns);
    CHECK(tsc_to_ns(origin.tsc - 1000) == origin.ns);  // never before the start
  }

  TEST_CASE("a rate measured 3 % off is steered onto the clock, and the map never goes down") {
    if (!kHaveTsc) return;
    // given a map started with a wrong rate
    const ClockPair origin = read_clock_pair();
    tsc_map_start(origin, measured_rate(1'000'000) * 1.03);
    // when the writer steers it through ten segments, with readings converted between them
    std::vector<std::pair<std::uint64_t, std::uint64_t>> seen;
    for (std::uint64_t n = 2; n <= 11; ++n) {
      steer_until(n);
      const std::uint64_t t = tsc_read();
      seen.emplace_back(t, tsc_to_ns(t));
    }
    // then every reading converts as it did when it was taken, in order
    std::uint64_t last = 0;
    for (const auto& [t, ns] : seen) {
      CHECK(tsc_to_ns(t) == ns);
      CHECK(ns >= last);
      last = ns;
    }
    // and the map is back on the clock: within 0.1 % of the time since the
    // start (the 3 % error alone would be 30 times that)
    const ClockPair now = read_clock_pair();
    const std::uint64_t mapped = tsc_to_ns(now.tsc);
    const std::uint64_t error = mapped > now.ns ? mapped - now.ns : now.ns - mapped;
    CHECK(error <= (now.ns - origin.ns) / 1000);
  }

  TEST_CASE("a writer converting while segments are added gets the function every later conversion gives") {
    if (!kHaveTsc) return;
    tsc_map_start(read_clock_pair(), measured_rate(1'000'000) * 0.98);
    const std::uint64_t target = tsc_map_segments() + 12;
    std::atomic<bool> done{false};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> converted;
    converted.reserve(1 << 21);
    // given a pool writer converting readings as it drains them
    std::thread writer([&] {
      while (!done.load(std::memory_order_acquire) && converted.size() < converted.capacity()) {
        const std::uint64_t t = tsc_read();
        converted.emplace_back(t, tsc_to_ns(t));
      }
    });
    // when the main writer adds segments meanwhile
    steer_until(target);
    done.store(true, std::memory_order_release);
    writer.join();
    // then each reading has the value the finished map gives it, and they rise
    REQUIRE(!converted.empty());
    std::uint64_t last = 0;
    std::size_t differ = 0;
    std::size_t down = 0;
    for (const auto& [t, ns] : converted) {
      differ += tsc_to_ns(t) != ns;
      down += ns < last;
      last = ns;
    }
    CHECK(differ == 0);
    CHECK(down == 0);
  }
}
