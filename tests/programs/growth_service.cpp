// A service whose request cache grows without bound but is cleared at
// shutdown, so nothing is leaked at exit: what `memrec report --growth` is for.
// Every tick (10 ms, paced by absolute deadlines, so the rate is exact on
// average however late each wake-up is) it does four things, each in a
// function of its own:
//   cache_insert   one 1,000-byte entry (or ENTRY_BYTES), kept until shutdown: grows steadily
//   pool_refresh   frees the oldest of 64 buffers of 512 bytes, allocates a new one: flat
//   sawtooth_push  a 4 KiB chunk, all of them freed every 25 ticks: a sawtooth
//   burst_once     once, half-way: one 128 KiB block, kept until shutdown: a single jump
//
//   growth_service TICKS exit      runs TICKS ticks, clears everything, exits 0
//   growth_service TICKS sigterm   ticks until SIGTERM, then the same
//   growth_service TICKS forever   ticks until killed (a test sends SIGKILL)
//   (a third argument sets the cache entries' size)
// (the burst comes at tick TICKS / 2 in every mode)
// Prints "ready" after the first tick, and at shutdown the cache's entries and
// the monotonic time of its first and last insert, from which a test derives
// the rate.
#include <signal.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "common.h"

namespace {

constexpr long kTickNs = 10'000'000;
constexpr int kPoolSize = 64;
constexpr int kSawtoothTeeth = 25;

struct Entry {
  Entry* next;
};

std::size_t g_entry_bytes = 1000;
Entry* g_cache = nullptr;
long g_entries = 0;
long long g_first_insert_ns = 0;
long long g_last_insert_ns = 0;
void* g_pool[kPoolSize];
int g_pool_next = 0;
void* g_sawtooth[kSawtoothTeeth];
int g_sawtooth_used = 0;
void* g_burst = nullptr;
volatile sig_atomic_t g_stop = 0;

long long now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

NOINLINE void cache_insert() {
  auto* e = static_cast<Entry*>(std::malloc(g_entry_bytes));
  if (e == nullptr) die("malloc");
  std::memset(e, 0x5a, g_entry_bytes);
  e->next = g_cache;
  g_cache = e;
  g_last_insert_ns = now_ns();
  if (g_entries++ == 0) g_first_insert_ns = g_last_insert_ns;
}

NOINLINE void pool_refresh() {
  std::free(g_pool[g_pool_next]);
  g_pool[g_pool_next] = std::malloc(512);
  if (g_pool[g_pool_next] == nullptr) die("malloc");
  std::memset(g_pool[g_pool_next], 1, 512);
  g_pool_next = (g_pool_next + 1) % kPoolSize;
}

NOINLINE void sawtooth_push() {
  if (g_sawtooth_used == kSawtoothTeeth) {
    for (void*& chunk : g_sawtooth) {
      std::free(chunk);
      chunk = nullptr;
    }
    g_sawtooth_used = 0;
  }
  g_sawtooth[g_sawtooth_used] = std::malloc(4096);
  if (g_sawtooth[g_sawtooth_used] == nullptr) die("malloc");
  std::memset(g_sawtooth[g_sawtooth_used++], 2, 4096);
}

NOINLINE void burst_once() {
  g_burst = std::malloc(128 * 1024);
  if (g_burst == nullptr) die("malloc");
  std::memset(g_burst, 3, 128 * 1024);
}

void shutdown() {
  while (g_cache != nullptr) {
    Entry* next = g_cache->next;
    std::free(g_cache);
    g_cache = next;
  }
  for (void* p : g_pool) std::free(p);
  for (void* p : g_sawtooth) std::free(p);
  std::free(g_burst);
  std::printf("cache %ld entries of %zu bytes, first %lld ns, last %lld ns\n", g_entries, g_entry_bytes,
              g_first_insert_ns, g_last_insert_ns);
}

void on_sigterm(int) { g_stop = 1; }

}  // namespace

int main(int argc, char** argv) {
  setup_stdout();
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: growth_service TICKS exit|sigterm|forever [ENTRY_BYTES]\n");
    return 1;
  }
  if (argc == 4) g_entry_bytes = std::strtoul(argv[3], nullptr, 10);
  if (g_entry_bytes < sizeof(Entry)) g_entry_bytes = sizeof(Entry);
  const long ticks = std::atol(argv[1]);
  const bool until_signal = std::strcmp(argv[2], "exit") != 0;
  if (std::strcmp(argv[2], "sigterm") == 0) {
    struct sigaction sa {};
    sa.sa_handler = on_sigterm;
    sigaction(SIGTERM, &sa, nullptr);
  }
  for (void*& p : g_pool) {
    p = std::malloc(512);
    if (p == nullptr) die("malloc");
  }
  timespec next{};
  clock_gettime(CLOCK_MONOTONIC, &next);
  for (long tick = 0; !g_stop && (until_signal || tick < ticks); ++tick) {
    cache_insert();
    pool_refresh();
    sawtooth_push();
    if (tick == ticks / 2) burst_once();
    if (tick == 0) std::printf("ready\n");
    next.tv_nsec += kTickNs;
    if (next.tv_nsec >= 1'000'000'000) {
      next.tv_nsec -= 1'000'000'000;
      ++next.tv_sec;
    }
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, nullptr) != 0 && !g_stop) {
    }
  }
  shutdown();
  return 0;
}
