// Every allocation function but malloc/realloc, each called twice from its
// own function: one block freed, one leaked. Leaks:
//   leak_memalign 1 x 1000, leak_aligned_alloc 1 x 2048,
//   leak_posix_memalign 1 x 3000, leak_valloc 1 x 4000, leak_pvalloc 1 x 5000,
//   leak_calloc 1 x 6000 (10 x 600), leak_reallocarray 1 x 7000 (7 x 1000).
// Exits 1 if a block is misaligned or a failing call does not fail.
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static int g_misaligned;

static void check(const char* fn, void* ptr, size_t alignment) {
  if (ptr == NULL) die(fn);
  if ((uintptr_t)ptr % alignment != 0) {
    printf("%s: %p is not aligned to %zu\n", fn, ptr, alignment);
    g_misaligned = 1;
  }
}

NOINLINE static void* leak_memalign(void) {
  free(memalign(64, 1000));
  void* ptr = memalign(64, 1000);
  check("memalign", ptr, 64);
  return ptr;
}

NOINLINE static void* leak_aligned_alloc(void) {
  free(aligned_alloc(128, 2048));
  void* ptr = aligned_alloc(128, 2048);
  check("aligned_alloc", ptr, 128);
  return ptr;
}

NOINLINE static void* leak_posix_memalign(void) {
  void* ptr = NULL;
  if (posix_memalign(&ptr, 3, 100) != EINVAL || ptr != NULL) die("posix_memalign(3) to fail");
  if (posix_memalign(&ptr, 256, 3000) != 0) die("posix_memalign");
  free(ptr);
  ptr = NULL;
  if (posix_memalign(&ptr, 256, 3000) != 0) die("posix_memalign");
  check("posix_memalign", ptr, 256);
  return ptr;
}

NOINLINE static void* leak_valloc(void) {
  free(valloc(4000));
  void* ptr = valloc(4000);
  check("valloc", ptr, (size_t)sysconf(_SC_PAGESIZE));
  return ptr;
}

NOINLINE static void* leak_pvalloc(void) {
  free(pvalloc(5000));
  void* ptr = pvalloc(5000);
  check("pvalloc", ptr, (size_t)sysconf(_SC_PAGESIZE));
  return ptr;
}

NOINLINE static void* leak_calloc(void) {
  free(calloc(10, 600));
  unsigned char* ptr = calloc(10, 600);
  check("calloc", ptr, 16);
  for (int i = 0; i < 6000; ++i) {
    if (ptr[i] != 0) die("calloc zeroes");
  }
  return ptr;
}

NOINLINE static void* leak_reallocarray(void) {
  char* ptr = reallocarray(NULL, 7, 500);
  check("reallocarray", ptr, 16);
  memset(ptr, 'r', 3500);
  ptr = reallocarray(ptr, 7, 1000);
  check("reallocarray", ptr, 16);
  if (ptr[3499] != 'r') die("reallocarray keeps contents");
  return ptr;
}

int main(void) {
  setup_stdout();
  keep(leak_memalign());
  keep(leak_aligned_alloc());
  keep(leak_posix_memalign());
  keep(leak_valloc());
  keep(leak_pvalloc());
  keep(leak_calloc());
  keep(leak_reallocarray());
  printf("aligned: %s\n", g_misaligned ? "MISALIGNED" : "all aligned");
  return g_misaligned;
}
