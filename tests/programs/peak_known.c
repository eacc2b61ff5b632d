// A known peak: alloc_big() holds 10 x 100000 bytes at once, then frees them;
// alloc_small() then leaks 5 x 1000. The heap's peak is exactly 1000000 bytes
// plus whatever the runtime holds at that moment (stdout uses a static buffer).
#include "common.h"

enum { kBig = 10, kBigBytes = 100000, kSmall = 5, kSmallBytes = 1000 };

NOINLINE static void* alloc_big(void) { return malloc(kBigBytes); }
NOINLINE static void* alloc_small(void) { return malloc(kSmallBytes); }

int main(void) {
  setup_stdout();
  void* big[kBig];
  for (int i = 0; i < kBig; ++i) {
    big[i] = alloc_big();
    if (big[i] == NULL) die("malloc");
  }
  for (int i = 0; i < kBig; ++i) free(big[i]);
  for (int i = 0; i < kSmall; ++i) keep(alloc_small());
  printf("peak_known: peak 1000000, leaked 5 x 1000\n");
  return 0;
}
