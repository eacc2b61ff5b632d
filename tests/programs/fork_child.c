// fork() without exec. Before the fork the parent leaks 1 x 1234 from
// before_fork_leak; after it the parent leaks 2 x 3000 from parent_leak and the
// child 3 x 2000 from child_leak, then exits 0; the parent waits for it.
// `fork_child busy` forks while two threads allocate and free in a loop, so a
// lock held by one of them at the fork must not hang the child.
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

static volatile int g_stop;

NOINLINE static void before_fork_leak(void) { keep(malloc(1234)); }
NOINLINE static void parent_leak(void) {
  for (int i = 0; i < 2; ++i) keep(malloc(3000));
}
NOINLINE static void child_leak(void) {
  for (int i = 0; i < 3; ++i) keep(malloc(2000));
}

NOINLINE static void* busy_allocator(void* arg) {
  (void)arg;
  while (!g_stop) {
    void* blocks[32];
    for (int i = 0; i < 32; ++i) blocks[i] = malloc((size_t)(i * 24 + 8));
    for (int i = 0; i < 32; ++i) free(blocks[i]);
  }
  return NULL;
}

int main(int argc, char** argv) {
  setup_stdout();
  const int busy = argc > 1 && strcmp(argv[1], "busy") == 0;
  pthread_t threads[2];
  if (busy) {
    for (int i = 0; i < 2; ++i) {
      if (pthread_create(&threads[i], NULL, busy_allocator, NULL) != 0) die("pthread_create");
    }
    usleep(50 * 1000);
  }
  before_fork_leak();
  const pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    child_leak();
    for (int i = 0; i < 1000; ++i) free(malloc(100));  // the child's allocator works
    printf("fork_child: child leaked 3 x 2000\n");
    return 0;
  }
  parent_leak();
  int status = 0;
  if (waitpid(child, &status, 0) != child) die("waitpid");
  if (busy) {
    g_stop = 1;
    for (int i = 0; i < 2; ++i) pthread_join(threads[i], NULL);
  }
  printf("fork_child: parent leaked 1234 + 2 x 3000, child exited %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
