// Starts 1000 short-lived threads, at most 8 at a time; each allocates and
// frees 50 blocks in churn_and_leave and leaks none, except thread number
// 999, which leaks 1 x 999 from last_thread_leak.
#include <pthread.h>
#include <stdint.h>

#include "common.h"

enum { kThreads = 1000, kBatch = 8 };

NOINLINE static void last_thread_leak(void) { keep(malloc(999)); }

NOINLINE static void churn_and_leave(int index) {
  void* blocks[50];
  for (int i = 0; i < 50; ++i) blocks[i] = malloc((size_t)(index % 97 + i + 1));
  for (int i = 0; i < 50; ++i) free(blocks[i]);
  if (index == kThreads - 1) last_thread_leak();
}

static void* worker(void* arg) {
  churn_and_leave((int)(intptr_t)arg);
  return NULL;
}

NOINLINE static void run_batches(void) {
  for (int first = 0; first < kThreads; first += kBatch) {
    pthread_t threads[kBatch];
    for (int i = 0; i < kBatch; ++i) {
      if (pthread_create(&threads[i], NULL, worker, (void*)(intptr_t)(first + i)) != 0) die("pthread_create");
    }
    for (int i = 0; i < kBatch; ++i) pthread_join(threads[i], NULL);
  }
}

int main(void) {
  setup_stdout();
  run_batches();
  printf("many_threads: %d threads came and went\n", kThreads);
  return 0;
}
