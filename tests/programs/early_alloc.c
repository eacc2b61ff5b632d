// Linked with libearly_alloc.so, whose constructor leaks 1 x 1357 from
// early_ctor_leak before the recorder's own constructor runs; main leaks
// 1 x 2468 from late_leak.
#include "common.h"

int early_alloc_ready(void);

NOINLINE static void late_leak(void) { keep(malloc(2468)); }

int main(void) {
  setup_stdout();
  late_leak();
  printf("early_alloc: constructor block %s\n", early_alloc_ready() ? "allocated" : "missing");
  return early_alloc_ready() ? 0 : 1;
}
