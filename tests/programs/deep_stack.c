// Recurses `deep_stack [DEPTH]` levels (default 300) through recurse(), then
// leaks 1 x 5555 from leak_deep at the bottom.
#include "common.h"

NOINLINE static void leak_deep(void) { keep(malloc(5555)); }

NOINLINE static int recurse(int levels) {
  if (levels == 0) {
    leak_deep();
    return 0;
  }
  return recurse(levels - 1) + 1;  // not a tail call, so every level is a frame
}

int main(int argc, char** argv) {
  setup_stdout();
  const int depth = argc > 1 ? atoi(argv[1]) : 300;
  printf("deep_stack: recursed %d levels\n", recurse(depth));
  return 0;
}
