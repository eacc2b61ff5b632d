// `sigkill_loop [paced]`: four threads allocate and free in a loop until the
// process is killed (or 60 s pass); `paced`, each sleeps 1 ms after every
// allocation, so the recorder's frames fill slowly and only its once-a-second
// flush writes them. Every 100 ms the main thread prints a progress marker
//   "marker <CLOCK_MONOTONIC ns> <allocations returned so far>"
// so a test that SIGKILLs it knows how many allocations had happened by when.
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

enum { kThreads = 4, kLive = 64 };

static uint64_t g_allocs;
static int g_paced;

NOINLINE static void* loop_alloc(size_t size) { return malloc(size); }

static void* worker(void* arg) {
  unsigned seed = (unsigned)(uintptr_t)arg;
  void* live[kLive] = {0};
  for (;;) {
    seed = seed * 1103515245u + 12345u;
    const unsigned slot = (seed >> 8) % kLive;
    free(live[slot]);
    live[slot] = loop_alloc(16 + (seed >> 16) % 2000);
    __atomic_add_fetch(&g_allocs, 1, __ATOMIC_RELAXED);
    if (g_paced) usleep(1000);
  }
  return NULL;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char** argv) {
  setup_stdout();
  g_paced = argc > 1 && strcmp(argv[1], "paced") == 0;
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    if (pthread_create(&threads[i], NULL, worker, (void*)(uintptr_t)(i + 1)) != 0) die("pthread_create");
  }
  for (int tick = 0; tick < 600; ++tick) {
    const uint64_t count = __atomic_load_n(&g_allocs, __ATOMIC_RELAXED);
    printf("marker %llu %llu\n", (unsigned long long)now_ns(), (unsigned long long)count);
    usleep(100 * 1000);
  }
  printf("sigkill_loop: nobody killed me\n");
  return 1;
}
