// dlopen()s libtest_alloc.so (beside this program) twice; each time its
// constructor leaks 1 x 4444 (lib_ctor_leak), the program calls lib_leak()
// (1 x 3333), and dlclose()s it. Between the two, after_dlclose() makes an
// allocation with a new stack, and an anonymous mapping takes the hole the
// library left, so the second load is likely at another address.
#include <libgen.h>
#include <limits.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"
#include "load_library.h"

NOINLINE static void after_dlclose(void) { free(malloc(55)); }

int main(void) {
  setup_stdout();
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("readlink");
  self[n] = '\0';
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/libtest_alloc.so", dirname(self));

  load_call_close(path);
  after_dlclose();
  void* filler = mmap(NULL, 64 * 1024, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (filler == MAP_FAILED) die("mmap");
  load_call_close(path);
  after_dlclose();
  printf("dlopen_lib: loaded, called and closed twice\n");
  return 0;
}
