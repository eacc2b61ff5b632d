// Keeps many small blocks live at once: `many_live N` allocates N blocks of 16
// bytes from keep_many(), all live together, then frees them. Default N:
// 200000, so the live-block count needs six digits and a separator on an axis.
#include "common.h"

NOINLINE static void* keep_many(void) { return malloc(16); }

int main(int argc, char** argv) {
  setup_stdout();
  const long n = argc > 1 ? atol(argv[1]) : 200000;
  void** blocks = malloc((size_t)n * sizeof(void*));
  for (long i = 0; i < n; ++i) blocks[i] = keep_many();
  for (long i = 0; i < n; ++i) free(blocks[i]);
  free(blocks);
  printf("many_live: %ld blocks\n", n);
  return 0;
}
