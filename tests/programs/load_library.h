// dlopen()s the library at `path`, calls its lib_leak() and dlclose()s it;
// for the programs that load tests/programs/test_alloc_lib.c.
#pragma once

#include <dlfcn.h>

#include "common.h"

NOINLINE static void load_call_close(const char* path) {
  void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    exit(99);
  }
  void (*lib_leak)(void) = (void (*)(void))dlsym(lib, "lib_leak");
  if (lib_leak == NULL) die("dlsym(lib_leak)");
  lib_leak();
  if (dlclose(lib) != 0) die("dlclose");
}
