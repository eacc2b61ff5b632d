// dlopen()s libtest_alloc.so (beside this program) twice; each time its
// constructor leaks 1 x 4444 (lib_ctor_leak), the program calls lib_leak()
// (1 x 3333), and dlclose()s it. Between the two, after_dlclose() makes an
// allocation with a new stack, and an anonymous mapping takes the hole the
// library left, so the second load is likely at another address.
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "load_library.h"

NOINLINE static void after_dlclose(void) { free(malloc(55)); }

int main(void) {
  setup_stdout();
  char path[PATH_MAX + 64];
  beside_self(path, sizeof path, "libtest_alloc.so");

  load_call_close(path, RTLD_LOCAL);
  after_dlclose();
  void* filler = mmap(NULL, 64 * 1024, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (filler == MAP_FAILED) die("mmap");
  load_call_close(path, RTLD_LOCAL);
  after_dlclose();
  printf("dlopen_lib: loaded, called and closed twice\n");
  return 0;
}
