// The --threads setting behind parallel_for.h's loops.
#include "common/parallel_for.h"

namespace memrec::analyzer {
namespace {

// Relaxed: written by the command line before any worker starts.
std::atomic<unsigned> g_worker_threads{0};

}  // namespace

void set_worker_threads(unsigned threads) { g_worker_threads.store(threads, std::memory_order_relaxed); }

unsigned worker_threads() {
  const unsigned set = g_worker_threads.load(std::memory_order_relaxed);
  return set != 0 ? set : std::clamp(std::thread::hardware_concurrency(), 1u, 8u);
}

}  // namespace memrec::analyzer
