// Leaks exactly 3 x 4242 bytes from leak_here(); frees everything else it
// allocates (including a malloc(0) and a free(NULL)).
#include <string.h>

#include "common.h"

NOINLINE static void* leak_here(void) {
  void* ptr = malloc(4242);
  if (ptr == NULL) die("malloc");
  memset(ptr, 0x42, 4242);
  return ptr;
}

NOINLINE static void churn(void) {
  void* blocks[100];
  for (int i = 0; i < 100; ++i) {
    blocks[i] = malloc((size_t)(i * 37 + 1));
    if (blocks[i] == NULL) die("malloc");
  }
  for (int i = 99; i >= 0; --i) free(blocks[i]);
  free(malloc(0));
  free(NULL);
}

int main(void) {
  setup_stdout();
  for (int i = 0; i < 3; ++i) keep(leak_here());
  churn();
  printf("leak_three: leaked 3 x 4242\n");
  return 0;
}
