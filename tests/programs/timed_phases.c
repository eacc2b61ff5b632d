// Three phases 300 ms apart, so a time range or an instant picks a known heap
// (tests/browser):
//   0 ms    phase_one   holds 4 x 10000 (freed at 600 ms)
//   300 ms  phase_two   leaks 2 x 50000            heap 140000, 6 blocks
//   600 ms  phase_three leaks 3 x 7000, grow_block leaks 1 x 900 after
//           malloc(100) -> realloc(500) -> realloc(900), many_small makes
//           250 blocks of 100..349 bytes, each freed at once, and the thread
//           "phase-worker" leaks 1 x 4321 from worker_leak
//   then it sleeps 300 ms and exits. Leaked: 100000 + 21000 + 900 + 4321.
#include <pthread.h>
#include <unistd.h>

#include "common.h"

enum { kOne = 4, kOneBytes = 10000, kTwo = 2, kTwoBytes = 50000, kThree = 3, kThreeBytes = 7000 };
enum { kPhaseUs = 300 * 1000, kSmall = 250 };

NOINLINE static void* phase_one(void) { return malloc(kOneBytes); }
NOINLINE static void* phase_two(void) { return malloc(kTwoBytes); }
NOINLINE static void* phase_three(void) { return malloc(kThreeBytes); }

NOINLINE static void* grow_block(void) {
  void* ptr = malloc(100);
  if (ptr == NULL) die("malloc");
  void* bigger = realloc(ptr, 500);
  if (bigger == NULL) die("realloc");
  void* biggest = realloc(bigger, 900);
  if (biggest == NULL) die("realloc");
  return biggest;
}

NOINLINE static void many_small(void) {
  for (int i = 0; i < kSmall; ++i) free(malloc((size_t)(100 + i)));
}

NOINLINE static void* worker_leak(void* arg) {
  (void)arg;
  pthread_setname_np(pthread_self(), "phase-worker");  // before its first event
  keep(malloc(4321));
  return NULL;
}

int main(void) {
  setup_stdout();
  void* one[kOne];
  for (int i = 0; i < kOne; ++i) {
    one[i] = phase_one();
    if (one[i] == NULL) die("malloc");
  }
  usleep(kPhaseUs);
  for (int i = 0; i < kTwo; ++i) keep(phase_two());
  usleep(kPhaseUs);
  for (int i = 0; i < kOne; ++i) free(one[i]);
  for (int i = 0; i < kThree; ++i) keep(phase_three());
  keep(grow_block());
  many_small();
  pthread_t worker;
  if (pthread_create(&worker, NULL, worker_leak, NULL) != 0) die("pthread_create");
  pthread_join(worker, NULL);
  usleep(kPhaseUs);
  printf("timed_phases: leaked 100000 + 21000 + 900 + 4321\n");
  return 0;
}
