// libtest_alloc.so, dlopen()ed by dlopen_lib. Its constructor leaks
// 1 x 4444 from lib_ctor_leak; each call of lib_leak() leaks 1 x 3333.
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))

void* volatile g_lib_sink[8];
static unsigned g_lib_sink_next;

NOINLINE static void lib_ctor_leak(void) { g_lib_sink[g_lib_sink_next++ % 8] = malloc(4444); }

__attribute__((constructor)) static void lib_init(void) { lib_ctor_leak(); }

NOINLINE __attribute__((visibility("default"))) void lib_leak(void) {
  g_lib_sink[g_lib_sink_next++ % 8] = malloc(3333);
}
