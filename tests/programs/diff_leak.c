// Built twice for `memrec diff` (tests/integration/test_diff_*.py): diff_leak_base
// leaks 2 x 1000 bytes from leak_kept() and holds 50000 bytes at its peak
// (hold_big, freed); diff_leak_extra (DIFF_EXTRA_LEAK=1) also leaks 1 x 3333
// bytes from leak_extra(). Both builds have the same lines, so their call sites
// match by (function, file, line).
#include "common.h"

#ifndef DIFF_EXTRA_LEAK
#define DIFF_EXTRA_LEAK 0
#endif

enum { kKept = 2, kKeptBytes = 1000, kExtraBytes = 3333, kBigBytes = 50000 };

NOINLINE static void* leak_kept(void) { return malloc(kKeptBytes); }
NOINLINE static void* leak_extra(void) { return malloc(kExtraBytes); }
NOINLINE static void hold_big(void) {
  void* big = malloc(kBigBytes);
  if (big == NULL) die("malloc");
  keep(big);
  free(big);
}

int main(void) {
  setup_stdout();
  hold_big();
  for (int i = 0; i < kKept; ++i) keep(leak_kept());
  if (DIFF_EXTRA_LEAK) keep(leak_extra());
  printf("diff_leak: leaked %d x %d%s\n", kKept, kKeptBytes, DIFF_EXTRA_LEAK ? " and 1 x 3333" : "");
  return 0;
}
