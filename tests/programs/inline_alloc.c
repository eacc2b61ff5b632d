// Leaks exactly 2 x 3131 bytes from inlined_alloc(), which is always_inline:
// GCC inlines it into the noinline outer_alloc() even at -O0 and describes it
// in DWARF as an inlined subroutine, so the backtrace of those allocations is
// inlined_alloc (inlined), outer_alloc, main (tests/browser, test_view_api.py).
#include "common.h"

enum { kBlocks = 2, kBlockBytes = 3131 };

static inline __attribute__((always_inline)) void* inlined_alloc(size_t size) {
  void* ptr = malloc(size);
  if (ptr == NULL) die("malloc");
  return ptr;
}

NOINLINE static void* outer_alloc(void) { return inlined_alloc(kBlockBytes); }

int main(void) {
  setup_stdout();
  for (int i = 0; i < kBlocks; ++i) keep(outer_alloc());
  printf("inline_alloc: leaked 2 x 3131\n");
  return 0;
}
