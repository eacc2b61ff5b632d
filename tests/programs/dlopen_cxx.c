// A C program that dlopen()s libtest_cxx.so (beside it) with RTLD_LOCAL,
// calls its lib_leak() and dlclose()s it, twice: each time the library
// leaks 2 x 2222 bytes with operator new[] (cxx_lib_leak).
#include "common.h"
#include "load_library.h"

int main(void) {
  setup_stdout();
  char path[PATH_MAX + 64];
  beside_self(path, sizeof path, "libtest_cxx.so");
  load_call_close(path, RTLD_LOCAL);
  load_call_close(path, RTLD_LOCAL);
  printf("dlopen_cxx: loaded, called and closed twice\n");
  return 0;
}
