// Allocates in three phases with a marker between them, set through
// memrec_mark() looked up with dlsym, so the same binary runs without memrec
// (dlsym then returns NULL and no marker is set). Every block is kept:
//   phase_one   10 x 1000 =  10000 bytes, then marker "a"
//   phase_two    7 x 3000 =  21000 bytes, then marker "b"
//   phase_three  5 x 5000 =  25000 bytes, then marker "b" again
// Prints whether memrec_mark was found and the bytes of each phase.
#include <dlfcn.h>
#include <memrec/mark.h>

#include "common.h"

static void* g_blocks[32];
static unsigned g_count;

NOINLINE static void phase_one(void) {
  for (int i = 0; i < 10; ++i) g_blocks[g_count++] = malloc(1000);
}
NOINLINE static void phase_two(void) {
  for (int i = 0; i < 7; ++i) g_blocks[g_count++] = malloc(3000);
}
NOINLINE static void phase_three(void) {
  for (int i = 0; i < 5; ++i) g_blocks[g_count++] = malloc(5000);
}

int main(void) {
  setup_stdout();
  const memrec_mark_fn mark = (memrec_mark_fn)dlsym(RTLD_DEFAULT, MEMREC_MARK_SYMBOL);
  phase_one();
  if (mark != NULL) mark("a");
  phase_two();
  if (mark != NULL) mark("b");
  phase_three();
  if (mark != NULL) mark("b");
  for (unsigned i = 0; i < g_count; ++i) {
    if (g_blocks[i] == NULL) die("malloc");
  }
  printf("marker_phases: memrec_mark %s; phases 10000 21000 25000 bytes\n", mark != NULL ? "found" : "absent");
  return 0;
}
