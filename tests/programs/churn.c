// Churns the heap for load tests: `churn N` makes N allocations of 1..1024
// bytes (a fixed pseudo-random sequence) into 4096 slots, freeing the slot's
// previous block first, then frees the rest. Default N: 5000000.
#include <stdint.h>

#include "common.h"

enum { kSlots = 4096 };

NOINLINE static void* churn_alloc(size_t size) { return malloc(size); }

int main(int argc, char** argv) {
  setup_stdout();
  const long n = argc > 1 ? atol(argv[1]) : 5000000;
  static void* slots[kSlots];
  uint64_t state = 88172645463325252ull;
  for (long i = 0; i < n; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    const size_t slot = (size_t)(state % kSlots);
    free(slots[slot]);
    slots[slot] = churn_alloc((size_t)((state >> 20) % 1024) + 1);
    if (slots[slot] == NULL) die("malloc");
  }
  for (int i = 0; i < kSlots; ++i) free(slots[i]);
  printf("churn: %ld allocations\n", n);
  return 0;
}
