// Blocks handed between a thread that records alone and one that does not:
// main allocates kBlocks blocks while it is the only thread, then starts a
// thread that frees them all before doing anything else; that thread then
// allocates kBlocks blocks and exits, and main, alone again once the recorder
// has retired it, frees them. Each handover crosses the switch between the
// recorder's two ways of stamping events (preload/order_stamp.h): a dump that
// orders one wrongly shows unmatched frees and false leaks. All 2 x kBlocks
// blocks come from fill_blocks(), and nothing leaks.
#include <pthread.h>
#include <time.h>

#include "common.h"

enum { kBlocks = 1000 };

static void* g_blocks[kBlocks];

NOINLINE static void fill_blocks(size_t base) {
  for (int i = 0; i < kBlocks; ++i) {
    g_blocks[i] = malloc(base + (size_t)i % 64);
    if (g_blocks[i] == NULL) die("malloc");
  }
}

NOINLINE static void free_blocks(void) {
  for (int i = 0; i < kBlocks; ++i) free(g_blocks[i]);
}

static void* worker(void* arg) {
  (void)arg;
  free_blocks();
  fill_blocks(48);
  return NULL;
}

int main(void) {
  setup_stdout();
  fill_blocks(32);
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) die("pthread_create");
  if (pthread_join(thread, NULL) != 0) die("pthread_join");
  // The writer retires a thread within a cycle of its exit (a few ms when idle).
  const struct timespec wait = {0, 200 * 1000 * 1000};
  nanosleep(&wait, NULL);
  free_blocks();
  printf("handover_alone: %d blocks each way\n", kBlocks);
  return 0;
}
