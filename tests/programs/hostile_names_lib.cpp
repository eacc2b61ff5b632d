// libhostile_names_lib.so, dlopen()ed by hostile_names under a name that is
// markup. hostile_leak() leaks 1 x 5555 from leak_from<Foo<int>&>, a function
// whose name holds '<', '>' and '&'.
#include <cstdlib>

template <typename T>
struct Foo {
  T value;
};

void* volatile g_hostile_sink;

template <typename T>
__attribute__((noinline)) void* leak_from(T) {
  return std::malloc(5555);
}

extern "C" __attribute__((noinline, visibility("default"))) void hostile_leak() {
  Foo<int> foo{1};
  g_hostile_sink = leak_from<Foo<int>&>(foo);
}
