// realloc in all its cases. Leaks: grow_buffer 1 x 50000 (after growing
// 16 -> 100 -> 1000 -> 10000 -> 100000 -> 1000000 and shrinking to 50000),
// realloc_null 1 x 777, realloc_fail 1 x 1212 (a realloc that fails leaves the
// old block live). realloc_zero and failing_calls leak nothing.
#include <stdint.h>
#include <string.h>

#include "common.h"

NOINLINE static void* grow_buffer(void) {
  static const size_t kSizes[] = {100, 1000, 10000, 100000, 1000000, 50000};
  char* buf = malloc(16);
  if (buf == NULL) die("malloc");
  memset(buf, 'x', 16);
  for (size_t i = 0; i < sizeof kSizes / sizeof kSizes[0]; ++i) {
    char* bigger = realloc(buf, kSizes[i]);
    if (bigger == NULL) die("realloc");
    if (bigger[0] != 'x' || bigger[15] != 'x') die("realloc keeps contents");
    buf = bigger;
  }
  return buf;
}

NOINLINE static void* realloc_null(void) {
  void* ptr = realloc(NULL, 777);
  if (ptr == NULL) die("realloc(NULL)");
  return ptr;
}

NOINLINE static void realloc_zero(void) {
  void* ptr = malloc(888);
  if (ptr == NULL) die("malloc");
  // glibc frees the block and returns NULL.
  void* result = realloc(ptr, 0);
  free(result);
}

// Sizes in volatile variables, so the compiler does not warn about them.
static volatile size_t g_huge = (size_t)1 << 62;
static volatile size_t g_half_range = (size_t)1 << 40;
static volatile size_t g_max_half = SIZE_MAX / 2;

NOINLINE static void* realloc_fail(void) {
  void* ptr = malloc(1212);
  if (ptr == NULL) die("malloc");
  void* huge = realloc(ptr, g_huge);
  if (huge != NULL) die("realloc of 2^62 bytes to fail");
  return ptr;  // still ours, and leaked
}

NOINLINE static void failing_calls(void) {
  if (malloc(g_huge) != NULL) die("malloc of 2^62 bytes to fail");
  if (calloc(g_half_range, g_half_range) != NULL) die("overflowing calloc to fail");
  if (reallocarray(NULL, g_max_half, 4) != NULL) die("overflowing reallocarray to fail");
}

int main(void) {
  setup_stdout();
  keep(grow_buffer());
  keep(realloc_null());
  realloc_zero();
  keep(realloc_fail());
  failing_calls();
  printf("realloc_chain: leaked 50000 + 777 + 1212\n");
  return 0;
}
