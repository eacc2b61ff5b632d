// 4 threads in a ring: thread i allocates kPerThread blocks in produce() and
// hands each to thread (i+1) % 4, which checks and frees it in consume(). So
// 4 x kPerThread frees happen on another thread than the allocation, and
// glibc hands freed blocks back to other threads: the dump must order those
// events right or show false leaks. Nothing leaks.
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

enum { kThreads = 4, kPerThread = 20000, kQueueSlots = 256 };

struct Queue {
  pthread_mutex_t lock;
  pthread_cond_t changed;
  void* slots[kQueueSlots];
  unsigned head, tail;  // head - tail = blocks waiting
};

static struct Queue g_queues[kThreads];
static long g_freed[kThreads];
static int g_bad_blocks;

static void queue_push(struct Queue* queue, void* ptr) {
  pthread_mutex_lock(&queue->lock);
  while (queue->head - queue->tail == kQueueSlots) pthread_cond_wait(&queue->changed, &queue->lock);
  queue->slots[queue->head++ % kQueueSlots] = ptr;
  pthread_cond_broadcast(&queue->changed);
  pthread_mutex_unlock(&queue->lock);
}

static void* queue_pop(struct Queue* queue) {
  pthread_mutex_lock(&queue->lock);
  while (queue->head == queue->tail) pthread_cond_wait(&queue->changed, &queue->lock);
  void* ptr = queue->slots[queue->tail++ % kQueueSlots];
  pthread_cond_broadcast(&queue->changed);
  pthread_mutex_unlock(&queue->lock);
  return ptr;
}

// Block layout: [u32 producer][u32 sequence][payload...]
NOINLINE static void* produce(int self, int seq) {
  const size_t size = 16 + (size_t)(seq % 61) * 8;
  uint32_t* block = malloc(size);
  if (block == NULL) die("malloc");
  block[0] = (uint32_t)self;
  block[1] = (uint32_t)seq;
  return block;
}

NOINLINE static void consume(int self, void* ptr) {
  const uint32_t* block = ptr;
  if (block[0] != (uint32_t)((self + kThreads - 1) % kThreads)) __atomic_add_fetch(&g_bad_blocks, 1, __ATOMIC_RELAXED);
  free(ptr);
  ++g_freed[self];
}

// Interleaves producing for the next thread with consuming from the previous.
static void* ring_worker(void* arg) {
  const int self = (int)(intptr_t)arg;
  struct Queue* out = &g_queues[(self + 1) % kThreads];
  struct Queue* in = &g_queues[self];
  int produced = 0;
  long consumed = 0;
  while (produced < kPerThread || consumed < kPerThread) {
    if (produced < kPerThread) {
      queue_push(out, produce(self, produced));
      ++produced;
    }
    if (consumed < kPerThread) {
      consume(self, queue_pop(in));
      ++consumed;
    }
  }
  return NULL;
}

NOINLINE static void run_ring(void) {
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    pthread_mutex_init(&g_queues[i].lock, NULL);
    pthread_cond_init(&g_queues[i].changed, NULL);
  }
  for (int i = 0; i < kThreads; ++i) {
    if (pthread_create(&threads[i], NULL, ring_worker, (void*)(intptr_t)i) != 0) die("pthread_create");
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
}

int main(void) {
  setup_stdout();
  run_ring();
  long total = 0;
  for (int i = 0; i < kThreads; ++i) total += g_freed[i];
  printf("threads_pass: %ld blocks freed across threads, %d bad\n", total, g_bad_blocks);
  return g_bad_blocks == 0 && total == (long)kThreads * kPerThread ? 0 : 1;
}
