// Allocation churn for scripts/bench: `churn ALLOCS THREADS DEPTH`. Each thread
// recurses DEPTH frames, then replaces random slots of a pool of live blocks
// (free the old one, malloc a new one) in batches of kBatch. ALLOCS mallocs in
// all, split evenly over THREADS, each freed before exit; no realloc, no
// free(nullptr). Deterministic: every run makes the same calls in each thread.
#include <array>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>
#include <thread>
#include <vector>

namespace {

constexpr std::uint32_t kPoolSlots = 4096;  // live blocks per thread
constexpr std::uint32_t kBatch = 64;        // allocations per descent
constexpr std::uint32_t kPathLevels = 4;    // the lowest levels vary: 16 call paths

struct Worker {
  std::uint64_t rng_state = 0;
  std::uint64_t allocs_left = 0;
  std::array<void*, kPoolSlots> pool{};
};

std::uint32_t next_random(Worker& w) {
  w.rng_state = w.rng_state * 6364136223846793005ull + 1442695040888963407ull;  // Knuth's MMIX LCG
  return static_cast<std::uint32_t>(w.rng_state >> 33);
}

// Three allocation sites with their own size classes, so the recorded stacks
// differ at the leaf as they do in real programs.
// Each fills its block, as a program initializes what it allocates.
[[gnu::noinline]] void* alloc_filled(std::size_t size_bytes) {
  void* block = std::malloc(size_bytes);
  if (block == nullptr) std::abort();
  std::memset(block, 0x5a, size_bytes);
  return block;
}
[[gnu::noinline]] void* alloc_small(std::uint32_t r) { return alloc_filled(16 + r % 113); }
[[gnu::noinline]] void* alloc_medium(std::uint32_t r) { return alloc_filled(129 + r % 896); }
[[gnu::noinline]] void* alloc_large(std::uint32_t r) { return alloc_filled(1025 + r % 7168); }

[[gnu::noinline]] void churn_batch(Worker& w) {
  const std::uint64_t count = w.allocs_left < kBatch ? w.allocs_left : kBatch;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint32_t r = next_random(w);
    void*& slot = w.pool[r % kPoolSlots];
    if (slot != nullptr) std::free(slot);
    const std::uint32_t kind = (r >> 12) % 100;
    void* block = kind < 75 ? alloc_small(r >> 8) : kind < 95 ? alloc_medium(r >> 8) : alloc_large(r >> 8);
    slot = block;
  }
  w.allocs_left -= count;
}

void descend(Worker& w, std::uint32_t depth, std::uint32_t path);

// One frame per level: the empty asm after each call keeps it from being a
// tail call, so the compiler cannot turn the recursion into a loop.
[[gnu::noinline]] void descend_a(Worker& w, std::uint32_t depth, std::uint32_t path) {
  descend(w, depth, path);
  asm volatile("" ::: "memory");
}
[[gnu::noinline]] void descend_b(Worker& w, std::uint32_t depth, std::uint32_t path) {
  descend(w, depth, path);
  asm volatile("" ::: "memory");
}

// Goes down `depth` more frames, through descend_a or descend_b as the low
// bits of `path` say on the last kPathLevels levels, then runs one batch.
inline void descend(Worker& w, std::uint32_t depth, std::uint32_t path) {
  if (depth == 0) {
    churn_batch(w);
    return;
  }
  const bool take_a = depth <= kPathLevels && ((path >> (depth - 1)) & 1) != 0;
  if (take_a) {
    descend_a(w, depth - 1, path);
  } else {
    descend_b(w, depth - 1, path);
  }
}

[[gnu::noinline]] void run_worker(Worker& w, std::uint32_t depth) {
  for (std::uint32_t path = 0; w.allocs_left > 0; ++path) descend(w, depth, path);
  for (void* block : w.pool) {
    if (block != nullptr) std::free(block);
  }
}

bool parse(std::string_view text, std::uint64_t& value) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc{} && end == text.data() + text.size();
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t allocs = 0, threads = 0, depth = 0;
  if (argc != 4 || !parse(argv[1], allocs) || !parse(argv[2], threads) || !parse(argv[3], depth) || threads == 0 ||
      threads > 64 || depth == 0 || depth > 100000) {
    std::fprintf(stderr, "usage: churn ALLOCS THREADS(1-64) DEPTH(1-100000)\n");
    return 1;
  }
  std::vector<std::unique_ptr<Worker>> workers;
  for (std::uint64_t t = 0; t < threads; ++t) {
    workers.push_back(std::make_unique<Worker>());
    workers.back()->rng_state = 0x9e3779b97f4a7c15ull * (t + 1);
    workers.back()->allocs_left = allocs / threads + (t < allocs % threads ? 1 : 0);
  }
  const auto d = static_cast<std::uint32_t>(depth);
  if (threads == 1) {
    run_worker(*workers[0], d);  // in the main thread: a single-threaded program
  } else {
    std::vector<std::thread> running;
    for (auto& w : workers) running.emplace_back([&w, d] { run_worker(*w, d); });
    for (auto& t : running) t.join();
  }
  std::printf("churn: %llu allocations in %llu thread(s) at depth %llu\n", static_cast<unsigned long long>(allocs),
              static_cast<unsigned long long>(threads), static_cast<unsigned long long>(depth));
  return 0;
}
