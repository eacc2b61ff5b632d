// Holds 64 MiB of touched heap (grow_resident, 64 x 1 MiB) for 400 ms, frees
// it, then idles 200 ms: RSS samples must see the peak.
#include <string.h>
#include <unistd.h>

#include "common.h"

enum { kBlocks = 64, kBlockBytes = 1024 * 1024 };

NOINLINE static void grow_resident(void** blocks) {
  for (int i = 0; i < kBlocks; ++i) {
    blocks[i] = malloc(kBlockBytes);
    if (blocks[i] == NULL) die("malloc");
    memset(blocks[i], i, kBlockBytes);
  }
}

int main(void) {
  setup_stdout();
  void* blocks[kBlocks];
  grow_resident(blocks);
  usleep(400 * 1000);
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  usleep(200 * 1000);
  printf("rss_grow: held 64 MiB\n");
  return 0;
}
