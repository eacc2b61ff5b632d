// Leaks 1 x 5005 from leak_before_signal on the main thread and 10 x 100 from
// worker_leak on a second thread that then blocks forever, then raises a
// signal with its default action: `fatal_signal TERM|INT|HUP`. The process
// must still die by that signal.
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "common.h"

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_worker_ready;

NOINLINE static void leak_before_signal(void) { keep(malloc(5005)); }
NOINLINE static void worker_leak(void) {
  for (int i = 0; i < 10; ++i) keep(malloc(100));
}

static void* worker(void* arg) {
  (void)arg;
  worker_leak();
  pthread_mutex_lock(&g_lock);
  g_worker_ready = 1;
  pthread_cond_broadcast(&g_cond);
  for (;;) pthread_cond_wait(&g_cond, &g_lock);  // never returns
  return NULL;
}

int main(int argc, char** argv) {
  setup_stdout();
  const char* name = argc > 1 ? argv[1] : "TERM";
  int signo = SIGTERM;
  if (strcmp(name, "INT") == 0) signo = SIGINT;
  if (strcmp(name, "HUP") == 0) signo = SIGHUP;
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) die("pthread_create");
  pthread_mutex_lock(&g_lock);
  while (!g_worker_ready) pthread_cond_wait(&g_cond, &g_lock);
  pthread_mutex_unlock(&g_lock);
  leak_before_signal();
  printf("fatal_signal: raising SIG%s\n", name);
  raise(signo);
  printf("fatal_signal: still alive\n");
  return 1;
}
