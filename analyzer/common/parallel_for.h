// A fork-join loop for the symbolizer's batches: no pool outlives a call, so
// there is nothing to shut down and no idle thread between reports.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace memrec::analyzer {

// Runs task(i) for every i in [0, count) on up to `threads` threads, the
// caller's among them, and returns when all are done. Tasks are taken in
// index order: put the longest first.
template <typename Task>
void parallel_for(std::size_t count, unsigned threads, const Task& task) {
  // Relaxed: the counter only hands out indices; what the tasks wrote is
  // published to the caller by join().
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) task(i);
  };
  const std::size_t helpers = std::min<std::size_t>(std::max(threads, 1u), count);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < helpers; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
}

}  // namespace memrec::analyzer
