// libearly_alloc.so, linked into early_alloc: the loader runs its constructor
// before libmemrec.so's (a preloaded library has no dependents, so it is
// initialized last). The constructor leaks 1 x 1357 from early_ctor_leak.
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void* volatile g_early_block;

NOINLINE static void early_ctor_leak(void) { g_early_block = malloc(1357); }

__attribute__((constructor)) static void early_init(void) { early_ctor_leak(); }

__attribute__((visibility("default"))) int early_alloc_ready(void) { return g_early_block != NULL; }
