// mariadbd's start, reduced: a failed dlsym leaves a message for dlerror()
// (glibc mallocs it and the object holding it), and the program's first
// operator new then comes with that message still pending. The preload looks
// its next operator new up with dlsym right there, and glibc frees the
// pending message inside that call. Every block is freed but the int that
// leak_one leaks (4 bytes); the freed message's addresses are malloc's next
// of their sizes, taken by reuse_sizes and freed.
#include <dlfcn.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#define NOINLINE __attribute__((noinline))

// As mariadbd's guess_malloc_library: is tcmalloc or jemalloc in the process?
NOINLINE static bool look_up_missing_allocator() {
  return dlsym(RTLD_DEFAULT, "memrec_test_no_such_allocator_fn") != nullptr;
}

NOINLINE static int* leak_one() { return new int(42); }

NOINLINE static void reuse_sizes() {
  // The sizes glibc's message and its holder had (a 24-byte object, a
  // message of the symbol's name and glibc's words): malloc hands the
  // freed blocks back first.
  void* blocks[4] = {malloc(24), malloc(std::strlen("undefined symbol: memrec_test_no_such_allocator_fn") + 1),
                     malloc(24), malloc(64)};
  for (void* b : blocks) free(b);
}

int main() {
  if (look_up_missing_allocator()) return 1;
  int* p = leak_one();
  reuse_sizes();
  std::printf("%d\n", *p);
  return 0;
}
