// The main thread leaves with pthread_exit() while two workers go on: each
// sleeps 100 ms, leaks 1 x 4040 from late_worker_leak and returns; the process
// ends (exit status 0) when the last worker does.
#include <pthread.h>
#include <unistd.h>

#include "common.h"

NOINLINE static void late_worker_leak(void) { keep(malloc(4040)); }

static void* worker(void* arg) {
  (void)arg;
  usleep(100 * 1000);
  late_worker_leak();
  for (int i = 0; i < 1000; ++i) free(malloc(64));
  return NULL;
}

int main(void) {
  setup_stdout();
  pthread_t threads[2];
  for (int i = 0; i < 2; ++i) {
    if (pthread_create(&threads[i], NULL, worker, NULL) != 0) die("pthread_create");
  }
  printf("main_thread_exit: main leaves first\n");
  fflush(stdout);
  pthread_exit(NULL);
}
