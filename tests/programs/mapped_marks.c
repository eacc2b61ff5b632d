// Anonymous mappings with markers between them, for the Maps view's markers:
//   map_kept   mmap 64 KiB, left mapped, then marker "mapped"
//   map_gone   mmap 256 KiB, munmap it, then marker "unmapped"
// The markers are set through memrec_mark() looked up with dlsym, so the
// binary runs without memrec too. Prints whether memrec_mark was found.
#include <dlfcn.h>
#include <memrec/mark.h>
#include <string.h>
#include <sys/mman.h>

#include "common.h"

enum { kKiB = 1024 };

NOINLINE static void* map_anon(size_t size) {
  void* addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) die("mmap");
  memset(addr, 1, size);
  return addr;
}

NOINLINE static void* map_kept(void) { return map_anon(64 * kKiB); }

NOINLINE static void map_gone(void) {
  void* addr = map_anon(256 * kKiB);
  if (munmap(addr, 256 * kKiB) != 0) die("munmap");
}

int main(void) {
  setup_stdout();
  const memrec_mark_fn mark = (memrec_mark_fn)dlsym(RTLD_DEFAULT, MEMREC_MARK_SYMBOL);
  void* kept = map_kept();
  if (mark != NULL) mark("mapped");
  map_gone();
  if (mark != NULL) mark("unmapped");
  printf("mapped_marks: memrec_mark %s; %p stays mapped\n", mark != NULL ? "found" : "absent", kept);
  return 0;
}
