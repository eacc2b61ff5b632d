// `cross_free_threads [THREADS [BLOCKS]]` (default 64 threads, 20000 blocks
// each, as scripts/stress runs it; test_threads.py passes fewer blocks): all
// threads run at once; thread i allocates BLOCKS blocks in produce() and hands
// each through a lock-free ring to thread (i + 1) % THREADS, which checks and
// frees it in consume(). So every free runs on another thread than its
// malloc, while glibc hands the freed blocks to the others: the dump must
// order those events or show unmatched frees and false leaks. Each thread also
// leaks 1 x (100000 + i) from leak_per_thread().
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

enum { kMaxThreads = 256, kRingSlots = 64 };

// One producer (thread i - 1), one consumer (thread i). The release store of
// `head` pairs with the consumer's acquire load; `tail` likewise the other way.
struct Ring {
  _Alignas(64) uint64_t head;
  _Alignas(64) uint64_t tail;
  void* slots[kRingSlots];
};

static struct Ring g_rings[kMaxThreads];
static int g_threads = 64;
static int g_blocks = 20000;
static int g_bad_blocks;

NOINLINE static void leak_per_thread(int self) { keep(malloc((size_t)(100000 + self))); }

// Block layout: [u32 producer][u32 sequence][payload...]
NOINLINE static uint32_t* produce(int self, int seq) {
  const size_t size = 16 + (size_t)((seq * 7 + self) % 250) * 8;
  uint32_t* block = malloc(size);
  if (block == NULL) die("malloc");
  block[0] = (uint32_t)self;
  block[1] = (uint32_t)seq;
  return block;
}

NOINLINE static void consume(int self, uint32_t* block) {
  if (block[0] != (uint32_t)((self + g_threads - 1) % g_threads))
    __atomic_add_fetch(&g_bad_blocks, 1, __ATOMIC_RELAXED);
  free(block);
}

static int ring_push(struct Ring* ring, void* ptr) {
  const uint64_t head = __atomic_load_n(&ring->head, __ATOMIC_RELAXED);
  if (head - __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE) == kRingSlots) return 0;
  ring->slots[head % kRingSlots] = ptr;
  __atomic_store_n(&ring->head, head + 1, __ATOMIC_RELEASE);
  return 1;
}

static void* ring_pop(struct Ring* ring) {
  const uint64_t tail = __atomic_load_n(&ring->tail, __ATOMIC_RELAXED);
  if (__atomic_load_n(&ring->head, __ATOMIC_ACQUIRE) == tail) return NULL;
  void* ptr = ring->slots[tail % kRingSlots];
  __atomic_store_n(&ring->tail, tail + 1, __ATOMIC_RELEASE);
  return ptr;
}

static void* worker(void* arg) {
  const int self = (int)(intptr_t)arg;
  struct Ring* out = &g_rings[(self + 1) % g_threads];
  struct Ring* in = &g_rings[self];
  leak_per_thread(self);
  int produced = 0, consumed = 0;
  uint32_t* pending = NULL;
  while (produced < g_blocks || consumed < g_blocks) {
    int progress = 0;
    if (produced < g_blocks) {
      if (pending == NULL) pending = produce(self, produced);
      if (ring_push(out, pending)) {
        pending = NULL;
        ++produced;
        progress = 1;
      }
    }
    uint32_t* got = ring_pop(in);
    if (got != NULL) {
      consume(self, got);
      ++consumed;
      progress = 1;
    }
    if (!progress) sched_yield();
  }
  return NULL;
}

int main(int argc, char** argv) {
  setup_stdout();
  if (argc > 1) g_threads = atoi(argv[1]);
  if (argc > 2) g_blocks = atoi(argv[2]);
  if (g_threads < 2 || g_threads > kMaxThreads || g_blocks < 1) die("arguments");
  static pthread_t threads[kMaxThreads];
  for (int i = 0; i < g_threads; ++i) {
    if (pthread_create(&threads[i], NULL, worker, (void*)(intptr_t)i) != 0) die("pthread_create");
  }
  for (int i = 0; i < g_threads; ++i) pthread_join(threads[i], NULL);
  printf("cross_free_threads: %d threads passed %d blocks each, %d bad\n", g_threads, g_blocks, g_bad_blocks);
  return g_bad_blocks == 0 ? 0 : 1;
}
