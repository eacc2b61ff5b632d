// dlopen()ed with RTLD_LOCAL by dlopen_cxx, a C program: the libstdc++ it
// brings is local to it, so its operator new is found only through the
// preload's (preload/cxx_hooks.cpp). lib_leak() leaks 2 x new char[2222]
// from cxx_lib_leak and frees 100 strings and their vector. A static object
// allocates while dlopen runs the library's constructors, with the loader's
// lock held (where the preload first looks the operators up), and frees it
// at dlclose.
#include <string>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace {

char* volatile g_keep[2];

struct AtLoad {
  std::string* text = new std::string(64, 'y');
  ~AtLoad() { delete text; }
} g_at_load;

NOINLINE void cxx_lib_leak() {
  for (auto& slot : g_keep) slot = new char[2222];
}

NOINLINE std::size_t cxx_lib_churn() {
  std::vector<std::string> strings;
  for (int i = 0; i < 100; ++i) strings.emplace_back(100, 'x');
  return strings.size();
}

}  // namespace

extern "C" void lib_leak() {
  cxx_lib_leak();
  if (cxx_lib_churn() != 100) __builtin_trap();
}
