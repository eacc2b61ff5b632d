// 8 threads, named leaker-0 .. leaker-7, each leak 1 x 1111 bytes from
// thread_leak() and exit at once, their events maybe not yet written; the
// main thread joins them and goes on allocating for a while.
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "common.h"

enum { kThreads = 8 };

NOINLINE static void* thread_leak(void) {
  void* ptr = malloc(1111);
  if (ptr == NULL) die("malloc");
  memset(ptr, 0x11, 1111);
  return ptr;
}

static void* leaker(void* arg) {
  char name[16];
  snprintf(name, sizeof name, "leaker-%d", (int)(intptr_t)arg);
  pthread_setname_np(pthread_self(), name);
  keep(thread_leak());
  return NULL;
}

NOINLINE static void main_goes_on(void) {
  for (int i = 0; i < 10000; ++i) free(malloc((size_t)(i % 500) + 1));
}

int main(void) {
  setup_stdout();
  pthread_t threads[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    if (pthread_create(&threads[i], NULL, leaker, (void*)(intptr_t)i) != 0) die("pthread_create");
  }
  for (int i = 0; i < kThreads; ++i) pthread_join(threads[i], NULL);
  main_goes_on();
  printf("thread_exit: %d threads leaked 1111 bytes each\n", kThreads);
  return 0;
}
