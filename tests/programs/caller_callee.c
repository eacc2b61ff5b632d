// A known call graph for the caller/callee view: alloc_block() allocates for
// two callers and for the bottom of a recursion.
//   caller_a: 3 x alloc_block(1000), leaked
//   caller_b: 2 x alloc_block(500), freed
//   recurse(3): 64 bytes of its own at each of its 4 levels, leaked, and at
//               the bottom one alloc_block(700), leaked
// So alloc_block's self is 4700 bytes in 6 allocations (3700 leaked), its
// callers caller_a 3000, caller_b 1000, recurse 700; recurse's inclusive is
// 956 bytes in 5 allocations however deep the recursion.
#include "common.h"

NOINLINE static void* alloc_block(size_t size) {
  void* ptr = malloc(size);
  if (ptr == NULL) die("malloc");
  return ptr;
}

NOINLINE static void caller_a(void) {
  for (int i = 0; i < 3; ++i) keep(alloc_block(1000));
}

NOINLINE static void caller_b(void) {
  void* blocks[2];
  for (int i = 0; i < 2; ++i) blocks[i] = alloc_block(500);
  for (int i = 0; i < 2; ++i) free(blocks[i]);
}

NOINLINE static void recurse(int depth) {
  void* own = malloc(64);
  if (own == NULL) die("malloc");
  keep(own);
  if (depth > 0) {
    recurse(depth - 1);
  } else {
    keep(alloc_block(700));
  }
}

int main(void) {
  setup_stdout();
  caller_a();
  caller_b();
  recurse(3);
  printf("caller_callee: done\n");
  return 0;
}
