// The analyzer's one fork-join loop. No pool outlives a call, so there is
// nothing to shut down and no idle thread between reports; every loop is
// capped by worker_threads(), which the command line sets from --threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace memrec::analyzer {

// Sets what worker_threads() answers: --threads N of the command that runs
// (0: one per core, at most 8). Set once, before any work starts.
void set_worker_threads(unsigned threads);
// The threads a parallel loop may use, the caller's among them: at least 1.
unsigned worker_threads();

// Runs body(w) for every w in [0, workers) at once, w == 0 on the caller's
// thread, and returns when all are done.
template <typename Body>
void run_workers(unsigned workers, const Body& body) {
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back([&body, w] { body(w); });
  body(0u);
  for (std::thread& t : pool) t.join();
}

// Runs task(i) for every i in [0, count) on up to `threads` threads, the
// caller's among them, and returns when all are done. Tasks are taken in
// index order: put the longest first.
template <typename Task>
void parallel_for(std::size_t count, unsigned threads, const Task& task) {
  // Relaxed: the counter only hands out indices; what the tasks wrote is
  // published to the caller by join().
  std::atomic<std::size_t> next{0};
  const auto work = [&](unsigned) {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < count;) task(i);
  };
  run_workers(static_cast<unsigned>(std::min<std::size_t>(std::max(threads, 1u), count)), work);
}

// Splits [begin, end) into `parts` near-equal ranges and runs
// fn(first, last, part) for each on up to worker_threads() threads. Callers
// that keep one result per part get the same results on any thread count.
template <typename Index, typename Fn>
void parallel_parts(Index begin, Index end, std::size_t parts, const Fn& fn) {
  const auto bound = [&](std::size_t p) {
    return static_cast<Index>(begin + static_cast<Index>((end - begin) * p / parts));
  };
  parallel_for(parts, worker_threads(), [&](std::size_t p) { fn(bound(p), bound(p + 1), p); });
}

}  // namespace memrec::analyzer
