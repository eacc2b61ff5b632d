// Starts N threads (argument 1, default 2000) with 64 KiB stacks and keeps
// them all alive at once behind a barrier. Each allocates and frees K - 1
// blocks of 48 bytes in churn (argument 2, K, default 20) and leaks one
// 1000-byte block from crowd_leak, then waits at a second barrier before
// being joined: N x K allocations, N leaked blocks of 1000 bytes.
#include <pthread.h>
#include <stdint.h>

#include "common.h"

enum { kChurnBytes = 48, kLeakBytes = 1000, kStackBytes = 64 * 1024 };

static pthread_barrier_t g_started;
static pthread_barrier_t g_done;
static long g_per_thread = 20;

NOINLINE static void crowd_leak(void) { keep(malloc(kLeakBytes)); }

NOINLINE static void churn(long count) {
  for (long i = 0; i < count; ++i) {
    void* volatile block = malloc(kChurnBytes);
    free(block);
  }
}

static void* worker(void* arg) {
  (void)arg;
  pthread_barrier_wait(&g_started);
  churn(g_per_thread - 1);
  crowd_leak();
  pthread_barrier_wait(&g_done);
  return NULL;
}

NOINLINE static void run_crowd(long threads) {
  pthread_t* ids = malloc(sizeof(pthread_t) * (size_t)threads);
  if (ids == NULL) die("malloc");
  pthread_attr_t attr;
  if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, kStackBytes) != 0) die("pthread_attr");
  if (pthread_barrier_init(&g_started, NULL, (unsigned)threads) != 0) die("pthread_barrier_init");
  if (pthread_barrier_init(&g_done, NULL, (unsigned)threads) != 0) die("pthread_barrier_init");
  for (long i = 0; i < threads; ++i) {
    if (pthread_create(&ids[i], &attr, worker, NULL) != 0) die("pthread_create");
  }
  for (long i = 0; i < threads; ++i) pthread_join(ids[i], NULL);
  pthread_attr_destroy(&attr);
  free(ids);
}

int main(int argc, char** argv) {
  setup_stdout();
  const long threads = argc > 1 ? atol(argv[1]) : 2000;
  if (argc > 2) g_per_thread = atol(argv[2]);
  if (threads < 1 || g_per_thread < 1) die("arguments");
  run_crowd(threads);
  printf("thread_crowd: %ld threads, %ld allocations each\n", threads, g_per_thread);
  return 0;
}
