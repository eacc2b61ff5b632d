// Linked with Debian's libjemalloc, so malloc is jemalloc's. Checks that by
// asking jemalloc how many bytes this thread allocated around a malloc, then
// leaks 4 x 4321 from jemalloc_leak and frees everything else.
#include <jemalloc/jemalloc.h>
#include <stdint.h>

#include "common.h"

static uint64_t thread_allocated(void) {
  uint64_t value = 0;
  size_t size = sizeof value;
  if (mallctl("thread.allocated", &value, &size, NULL, 0) != 0) die("mallctl(thread.allocated)");
  return value;
}

NOINLINE static void jemalloc_leak(void) {
  for (int i = 0; i < 4; ++i) keep(malloc(4321));
}

int main(void) {
  setup_stdout();
  const uint64_t before = thread_allocated();
  void* probe = malloc(100000);
  const uint64_t after = thread_allocated();
  free(probe);
  const int is_jemalloc = after - before >= 100000;
  jemalloc_leak();
  for (int i = 0; i < 1000; ++i) free(malloc((size_t)(i % 300) + 1));
  printf("jemalloc_prog: malloc is %s\n", is_jemalloc ? "jemalloc" : "NOT jemalloc");
  return is_jemalloc ? 0 : 1;
}
