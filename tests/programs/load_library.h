// dlopen()s the library at `path` (RTLD_LOCAL or RTLD_GLOBAL: `mode`), calls
// its lib_leak() and dlclose()s it; for the programs that load the test
// libraries.
#pragma once

#include <dlfcn.h>

#include "common.h"

NOINLINE static void load_call_close(const char* path, int mode) {
  void* lib = dlopen(path, RTLD_NOW | mode);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(99);
  }
  void (*lib_leak)(void) = (void (*)(void))dlsym(lib, "lib_leak");
  if (lib_leak == NULL) die("dlsym(lib_leak)");
  lib_leak();
  if (dlclose(lib) != 0) die("dlclose");
}
