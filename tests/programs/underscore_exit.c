// Leaks 1 x 3030 from leak_then_exit on the main thread and 10 x 100 from
// worker_leak on a second thread that then blocks, then calls _exit(3): no
// atexit handler, no destructor runs.
#include <pthread.h>
#include <unistd.h>

#include "common.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_worker_ready;

NOINLINE static void leak_then_exit(void) { keep(malloc(3030)); }
NOINLINE static void worker_leak(void) {
  for (int i = 0; i < 10; ++i) keep(malloc(100));
}

static void* worker(void* arg) {
  (void)arg;
  worker_leak();
  pthread_mutex_lock(&g_lock);
  g_worker_ready = 1;
  pthread_cond_broadcast(&g_cond);
  for (;;) pthread_cond_wait(&g_cond, &g_lock);
  return NULL;
}

int main(void) {
  setup_stdout();
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) die("pthread_create");
  pthread_mutex_lock(&g_lock);
  while (!g_worker_ready) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  leak_then_exit();
  printf("underscore_exit: calling _exit(3)\n");
  fflush(stdout);
  _exit(3);
}
