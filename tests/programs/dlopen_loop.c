// dlopen()s libtest_alloc.so (beside this program), calls lib_leak() and
// dlclose()s it, `dlopen_loop N` times (default 100). Each round leaks
// 1 x 4444 from the library's constructor (lib_ctor_leak) and 1 x 3333 from
// lib_leak; between rounds between_loads() allocates and frees 1 x 55, and
// every 8th round an anonymous mapping of 64 KiB is left where the library
// was, so later loads land at other addresses.
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "load_library.h"

NOINLINE static void between_loads(void) { free(malloc(55)); }

int main(int argc, char** argv) {
  setup_stdout();
  const long rounds = argc > 1 ? atol(argv[1]) : 100;
  char path[PATH_MAX + 64];
  beside_self(path, sizeof path, "libtest_alloc.so");
  for (long i = 0; i < rounds; ++i) {
    load_call_close(path, RTLD_LOCAL);
    between_loads();
    if (i % 8 == 7 && mmap(NULL, 64 * 1024, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) == MAP_FAILED) {
      die("mmap");
    }
  }
  printf("dlopen_loop: %ld rounds\n", rounds);
  return 0;
}
