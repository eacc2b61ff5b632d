// Names that are markup (tests/browser): `hostile_names LIB` dlopen()s
// LIB, which the test names `lib<img src=x onerror=alert(1)>.so` (a copy of
// libhostile_names_lib.so), and calls its hostile_leak(): 1 x 5555 leaked from
// the template `leak_from<Foo<int>&>`. The page must show both names as text.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  static char stdout_buffer[4096];
  setvbuf(stdout, stdout_buffer, _IOLBF, sizeof stdout_buffer);  // no stdio malloc
  if (argc != 2) {
    std::fprintf(stderr, "usage: hostile_names LIB\n");
    return 99;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 99;
  }
  auto hostile_leak = reinterpret_cast<void (*)()>(dlsym(lib, "hostile_leak"));
  if (hostile_leak == nullptr) {
    std::fprintf(stderr, "dlsym(hostile_leak) failed\n");
    return 99;
  }
  hostile_leak();
  std::printf("hostile_names: leaked 5555 from leak_from<Foo<int>&>\n");
  return 0;  // no dlclose: the module stays mapped until the end
}
