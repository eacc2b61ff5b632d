// `alone_check`: a program that must be single-threaded, checked as
// Chromium's zygote checks it (sandbox::ThreadHelpers::IsSingleThreaded:
// /proc/self/task has 2 + N links for N threads). Like the zygote, whose
// malloc is its own, it makes few calls the recorder sees: leaks 5 x 500
// bytes from leak_alone() and frees 10 more blocks first. Prints "threads: N"
// and exits 0 if N is 1, 134 (like a failed CHECK) if not.
#include <sys/stat.h>

#include "common.h"

NOINLINE static void* leak_alone(void) { return malloc(500); }

int main(void) {
  setup_stdout();
  for (int i = 0; i < 10; ++i) free(malloc((size_t)(16 + i)));
  for (int i = 0; i < 5; ++i) keep(leak_alone());
  struct stat task;
  if (stat("/proc/self/task", &task) != 0) die("stat /proc/self/task");
  const long threads = (long)task.st_nlink - 2;
  printf("threads: %ld\n", threads);
  return threads == 1 ? 0 : 134;
}
