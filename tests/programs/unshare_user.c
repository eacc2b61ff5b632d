// `unshare_user`: what `unshare --user` and sandboxes do, with the recorder's
// writer already running. Leaks 3 x 1111 bytes from leak_before(), starts and
// joins a thread that leaks 2222 from worker_leak() (a second recording
// thread starts the writer), then calls unshare(CLONE_NEWUSER), which the
// kernel refuses to a process with two threads, and leaks 2 x 3333 from
// leak_after(). Prints "unshare: ok" or the error, and exits 0 either way.
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "common.h"

NOINLINE static void* leak_before(void) { return malloc(1111); }
NOINLINE static void* worker_leak(void) { return malloc(2222); }
NOINLINE static void* leak_after(void) { return malloc(3333); }

static void* worker(void* arg) {
  (void)arg;
  keep(worker_leak());
  return NULL;
}

int main(void) {
  setup_stdout();
  for (int i = 0; i < 3; ++i) keep(leak_before());
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) die("pthread_create");
  pthread_join(thread, NULL);
  if (unshare(CLONE_NEWUSER) == 0) {
    printf("unshare: ok\n");
  } else {
    printf("unshare: %s\n", strerror(errno));
  }
  for (int i = 0; i < 2; ++i) keep(leak_after());
  return 0;
}
