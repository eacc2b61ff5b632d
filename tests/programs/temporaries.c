// Known temporary allocations (freed before the thread allocates anything
// else): temp_here() makes 7, each freed at once. pair_first() and
// pair_second() are called 5 times as: a = pair_first(); b = pair_second();
// free(a); free(b). a is never temporary (b was allocated in between); b is
// temporary by memrec's definition (no allocation on the thread between b's
// malloc and its free). heaptrack counts 7, not 12: it compares the freed
// block's (size, stack) with the last allocation's and forgets that one at
// every free, so free(a) hides b.
// keep_one() allocates 3 blocks that are never freed.
#include "common.h"

NOINLINE static void* temp_here(void) { return malloc(64); }
NOINLINE static void* pair_first(void) { return malloc(32); }
NOINLINE static void* pair_second(void) { return malloc(48); }
NOINLINE static void* keep_one(void) { return malloc(16); }

int main(void) {
  setup_stdout();
  for (int i = 0; i < 7; ++i) free(temp_here());
  for (int i = 0; i < 5; ++i) {
    void* a = pair_first();
    void* b = pair_second();
    free(a);
    free(b);
  }
  for (int i = 0; i < 3; ++i) keep(keep_one());
  printf("temporaries: 7 + 5\n");
  return 0;
}
