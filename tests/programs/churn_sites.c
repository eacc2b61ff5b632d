// A churn with call sites, for checking memrec view's range and instant
// answers against the events (tests/integration/test_view_oracle.py):
// `churn_sites N` makes N allocations of 1..4096 bytes from 8 call sites
// (site_0 .. site_7, each a noinline function), into 8192 slots whose
// previous block is freed first; one in 16 is freed at once (a temporary),
// and the slots in use grow and shrink in waves so the heap has peaks inside
// any range. The last 100 slots' blocks are left live at exit (leaks).
#include <stdint.h>

#include "common.h"

enum { kSlots = 8192, kLeft = 100 };

#define SITE(n) \
  NOINLINE static void* site_##n(size_t size) { return malloc(size); }
SITE(0)
SITE(1)
SITE(2)
SITE(3)
SITE(4)
SITE(5)
SITE(6)
SITE(7)

static void* (*const kSites[8])(size_t) = {site_0, site_1, site_2, site_3, site_4, site_5, site_6, site_7};

int main(int argc, char** argv) {
  setup_stdout();
  const long n = argc > 1 ? atol(argv[1]) : 1000000;
  static void* slots[kSlots];
  uint64_t state = 88172645463325252ull;
  for (long i = 0; i < n; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    // The slots in use: 1/8 to all of them, in waves of 2^20 allocations.
    const uint64_t wave = (uint64_t)(i >> 17) % 8 + 1;
    const size_t slot = (size_t)(state % (kSlots / 8 * wave));
    void* const p = kSites[(state >> 40) % 8]((size_t)((state >> 20) % 4096) + 1);
    if (p == NULL) die("malloc");
    if ((state >> 50) % 16 == 0) {
      free(p);  // a temporary: freed before this thread allocates again
      continue;
    }
    free(slots[slot]);
    slots[slot] = p;
  }
  for (int i = kLeft; i < kSlots; ++i) free(slots[i]);
  printf("churn_sites: %ld allocations\n", n);
  return 0;
}
