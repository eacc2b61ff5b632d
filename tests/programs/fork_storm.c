// `fork_storm N fork|exec` (scripts/stress: N = 200; test_process_lifecycle.py:
// N = 50): forks N children, at most 8 at a time, while a thread allocates and
// frees in a loop (so the allocator's and the recorder's locks may be held at
// any fork). The parent leaks 1 x 555 from parent_leak. A `fork` child leaks
// 1 x 777 from child_leak and leaves by exit() (even children) or _exit() (odd
// ones); an `exec` child execs this program as `fork_storm child`, which leaks
// 1 x 888 from exec_leak. Exits 0 when every child exited 0.
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

enum { kInFlight = 8 };

static volatile int g_stop;

NOINLINE static void parent_leak(void) { keep(malloc(555)); }
NOINLINE static void child_leak(void) { keep(malloc(777)); }
NOINLINE static void exec_leak(void) { keep(malloc(888)); }

static void* busy(void* arg) {
  (void)arg;
  while (!g_stop) {
    void* blocks[16];
    for (int i = 0; i < 16; ++i) blocks[i] = malloc((size_t)(i * 40 + 8));
    for (int i = 0; i < 16; ++i) free(blocks[i]);
  }
  return NULL;
}

static void run_child(int index, int exec) {
  if (exec) {
    execl("/proc/self/exe", "fork_storm", "child", (char*)NULL);
    _exit(98);
  }
  child_leak();
  for (int i = 0; i < 100; ++i) free(malloc((size_t)(i + 1)));
  if (index % 2 == 0) exit(0);
  _exit(0);
}

static int wait_one(void) {
  int status = 0;
  if (wait(&status) < 0) die("wait");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  setup_stdout();
  if (argc == 2 && strcmp(argv[1], "child") == 0) {
    exec_leak();
    return 0;
  }
  if (argc != 3 || (strcmp(argv[2], "fork") != 0 && strcmp(argv[2], "exec") != 0)) die("usage: fork_storm N fork|exec");
  const int n = atoi(argv[1]);
  const int exec = strcmp(argv[2], "exec") == 0;
  pthread_t thread;
  if (pthread_create(&thread, NULL, busy, NULL) != 0) die("pthread_create");
  parent_leak();
  int running = 0, failed = 0;
  for (int i = 0; i < n; ++i) {
    if (running == kInFlight) {
      failed += wait_one();
      --running;
    }
    const pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) run_child(i, exec);
    ++running;
  }
  while (running-- > 0) failed += wait_one();
  g_stop = 1;
  pthread_join(thread, NULL);
  printf("fork_storm: %d %s children, %d failed\n", n, argv[2], failed);
  return failed == 0 ? 0 : 1;
}
