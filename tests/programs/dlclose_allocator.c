// A C program that dlopen()s libtest_cxx_mimalloc.so (beside it) with
// RTLD_GLOBAL: the C++ library is linked against mimalloc, whose operator new
// comes before libstdc++'s in the global scope, so the preload's operators
// forward to mimalloc's. It calls lib_leak() and dlclose()s it, which unloads
// mimalloc too, then does the same with libtest_cxx.so (RTLD_LOCAL), whose
// operator new is the preload's as well: that only works if the preload kept
// the object its operators forward to loaded (pin() in preload/cxx_hooks.cpp).
// Each library leaks 2 x 2222 bytes (cxx_lib_leak).
#include "common.h"
#include "load_library.h"

int main(void) {
  setup_stdout();
  char path[PATH_MAX + 64];
  beside_self(path, sizeof path, "libtest_cxx_mimalloc.so");
  load_call_close(path, RTLD_GLOBAL);
  beside_self(path, sizeof path, "libtest_cxx.so");
  load_call_close(path, RTLD_LOCAL);
  printf("dlclose_allocator: both libraries loaded, called and closed\n");
  return 0;
}
