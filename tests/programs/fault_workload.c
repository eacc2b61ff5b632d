// The program of the fault tests (tests/integration/test_faults.py): a dump
// that grows fast. `fault_workload N [wait]` makes N allocations of 1..4096
// bytes into 4096 slots (a fixed pseudo-random sequence, freeing the slot's
// previous block first), frees the rest, leaks 3 x 5151 from leak_at_end,
// prints one line and exits 4. With `wait` it prints "ready" halfway and
// reads one byte from stdin before going on, so a test can act in between.
#include <stdint.h>
#include <unistd.h>

#include "common.h"

enum { kSlots = 4096 };

static void* g_slots[kSlots];
static uint64_t g_state = 88172645463325252ull;
static uint64_t g_checksum;

NOINLINE static void* churn_alloc(size_t size) { return malloc(size); }

NOINLINE static void leak_at_end(void) {
  for (int i = 0; i < 3; ++i) keep(malloc(5151));
}

static void churn(long n) {
  for (long i = 0; i < n; ++i) {
    g_state ^= g_state << 13;
    g_state ^= g_state >> 7;
    g_state ^= g_state << 17;
    const size_t slot = (size_t)(g_state % kSlots);
    free(g_slots[slot]);
    const size_t size = (size_t)((g_state >> 20) % 4096) + 1;
    unsigned char* p = churn_alloc(size);
    if (p == NULL) die("malloc");
    p[0] = (unsigned char)size;
    g_checksum += size;
    g_slots[slot] = p;
  }
}

int main(int argc, char** argv) {
  setup_stdout();
  const long n = argc > 1 ? atol(argv[1]) : 400000;
  const int wait = argc > 2;
  churn(n / 2);
  if (wait) {
    printf("ready\n");
    char byte;
    if (read(0, &byte, 1) != 1) die("read");
  }
  churn(n - n / 2);
  for (int i = 0; i < kSlots; ++i) free(g_slots[i]);
  leak_at_end();
  printf("fault_workload: %ld allocations, %llu bytes\n", n, (unsigned long long)g_checksum);
  return 4;
}
