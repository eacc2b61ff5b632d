// common/parallel_for.h: every index runs once, on no more threads than
// asked, and parallel_parts' ranges cover the whole range in order whatever
// worker_threads() allows, so per-part results do not depend on --threads.
#include "common/parallel_for.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <vector>

using memrec::analyzer::parallel_for;
using memrec::analyzer::parallel_parts;
using memrec::analyzer::run_workers;
using memrec::analyzer::set_worker_threads;
using memrec::analyzer::worker_threads;

namespace {

// The threads that ran tasks, recorded under a lock (the test's, not the loop's).
struct Seen {
  std::mutex mutex;
  std::set<std::thread::id> threads;
  void add() {
    const std::lock_guard<std::mutex> lock(mutex);
    threads.insert(std::this_thread::get_id());
  }
};

}  // namespace

TEST_SUITE("common/parallel_for") {
  TEST_CASE("runs every index exactly once on at most the threads asked") {
    for (const unsigned threads : {0u, 1u, 2u, 8u}) {
      for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{1000}}) {
        CAPTURE(threads);
        CAPTURE(count);
        std::vector<std::atomic<int>> runs(count);
        Seen seen;
        parallel_for(count, threads, [&](std::size_t i) {
          runs[i].fetch_add(1);
          seen.add();
        });
        for (const std::atomic<int>& r : runs) CHECK(r.load() == 1);
        CHECK(seen.threads.size() <= std::max(threads, 1u));
      }
    }
  }

  TEST_CASE("one thread runs every task on the caller's thread") {
    Seen seen;
    parallel_for(100, 1, [&](std::size_t) { seen.add(); });
    CHECK(seen.threads == std::set<std::thread::id>{std::this_thread::get_id()});
  }

  TEST_CASE("run_workers runs each worker once, worker 0 on the caller's thread") {
    std::vector<std::atomic<int>> runs(4);
    std::thread::id first;
    run_workers(4, [&](unsigned w) {
      runs[w].fetch_add(1);
      if (w == 0) first = std::this_thread::get_id();
    });
    for (const std::atomic<int>& r : runs) CHECK(r.load() == 1);
    CHECK(first == std::this_thread::get_id());
  }

  TEST_CASE("worker_threads is what --threads set, else one per core up to 8") {
    set_worker_threads(3);
    CHECK(worker_threads() == 3);
    set_worker_threads(1);
    CHECK(worker_threads() == 1);
    set_worker_threads(0);
    CHECK(worker_threads() == std::clamp(std::thread::hardware_concurrency(), 1u, 8u));
  }

  TEST_CASE("parallel_parts covers the range with the same parts on one thread or many") {
    using Part = std::tuple<std::uint32_t, std::uint32_t, std::size_t>;
    const auto parts_of = [](std::uint32_t begin, std::uint32_t end, std::size_t parts) {
      std::vector<Part> out(parts);
      parallel_parts(begin, end, parts, [&](std::uint32_t b, std::uint32_t e, std::size_t p) { out[p] = {b, e, p}; });
      return out;
    };
    for (const unsigned threads : {1u, 2u}) {
      CAPTURE(threads);
      set_worker_threads(threads);
      CHECK(parts_of(10, 21, 2) == std::vector<Part>{{10, 15, 0}, {15, 21, 1}});
      CHECK(parts_of(10, 21, 1) == std::vector<Part>{{10, 21, 0}});
      CHECK(parts_of(7, 7, 2) == std::vector<Part>{{7, 7, 0}, {7, 7, 1}});
    }
    set_worker_threads(0);
  }
}
