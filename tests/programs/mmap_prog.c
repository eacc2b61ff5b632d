// Anonymous memory with known sizes:
//   A: mmap 1 MiB, munmap it
//   B: mmap 64 KiB, left mapped
//   C: mmap 256 KiB, mremap to 512 KiB (may move), munmap it
//   D: mmap 128 KiB, munmap 32 KiB in its middle, then munmap all 128 KiB
//   a file mapping of 4 KiB (not anonymous), munmap it
// So 4 anonymous mmaps, 1 mremap, 5 munmaps; 64 KiB anonymous stay mapped.
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common.h"

enum { kKiB = 1024 };

NOINLINE static void* map_anon(size_t size) {
  void* addr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (addr == MAP_FAILED) die("mmap");
  memset(addr, 1, size);
  return addr;
}

NOINLINE static void map_file(void) {
  const int fd = open("/proc/self/exe", O_RDONLY);
  if (fd < 0) die("open");
  void* addr = mmap(NULL, 4 * kKiB, PROT_READ, MAP_PRIVATE, fd, 0);
  if (addr == MAP_FAILED) die("mmap(file)");
  close(fd);
  if (munmap(addr, 4 * kKiB) != 0) die("munmap(file)");
}

int main(void) {
  setup_stdout();
  void* a = map_anon(1024 * kKiB);
  if (munmap(a, 1024 * kKiB) != 0) die("munmap(A)");

  keep(map_anon(64 * kKiB));

  void* c = map_anon(256 * kKiB);
  c = mremap(c, 256 * kKiB, 512 * kKiB, MREMAP_MAYMOVE);
  if (c == MAP_FAILED) die("mremap");
  if (munmap(c, 512 * kKiB) != 0) die("munmap(C)");

  char* d = map_anon(128 * kKiB);
  if (munmap(d + 48 * kKiB, 32 * kKiB) != 0) die("munmap(D middle)");
  if (munmap(d, 128 * kKiB) != 0) die("munmap(D)");

  map_file();
  printf("mmap_prog: 64 KiB left mapped\n");
  return 0;
}
