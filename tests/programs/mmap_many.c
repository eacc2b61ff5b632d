// Many anonymous mappings with a known peak and end, for the Maps view:
//   grow_maps: 100 mappings of 16 KiB, all live at once (peak 1600 KiB);
//   97 of them unmapped, 3 left (48 KiB stay mapped);
//   churn_maps: 1000 times a 4 KiB mapping made and unmapped at once.
// So 1100 mmaps and 1097 munmaps; the mapped bytes never exceed 1600 KiB again.
#include <string.h>
#include <sys/mman.h>

#include "common.h"

enum { kKiB = 1024, kGrow = 100, kKept = 3, kChurn = 1000 };

NOINLINE static void* grow_maps(size_t size) {
  void* addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) die("mmap");
  return addr;
}

NOINLINE static void* churn_maps(size_t size) {
  void* addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) die("mmap");
  return addr;
}

int main(void) {
  setup_stdout();
  static void* grown[kGrow];
  for (int i = 0; i < kGrow; ++i) grown[i] = grow_maps(16 * kKiB);
  for (int i = kKept; i < kGrow; ++i) {
    if (munmap(grown[i], 16 * kKiB) != 0) die("munmap");
  }
  for (int i = 0; i < kKept; ++i) keep(grown[i]);
  for (int i = 0; i < kChurn; ++i) {
    char* p = churn_maps(4 * kKiB);
    p[0] = 1;
    if (munmap(p, 4 * kKiB) != 0) die("munmap");
  }
  printf("mmap_many: 48 KiB left mapped\n");
  return 0;
}
