// Allocates 3 blocks of 321 bytes in parent_blocks, then forks: the child
// frees all 3 in child_frees (blocks its own dump never saw allocated) and
// exits; the parent waits for it, then frees its own copies.
#include <sys/wait.h>

#include "common.h"

enum { kBlocks = 3, kBytes = 321 };

NOINLINE static void parent_blocks(void* blocks[kBlocks]) {
  for (int i = 0; i < kBlocks; ++i) blocks[i] = malloc(kBytes);
}

NOINLINE static void child_frees(void* blocks[kBlocks]) {
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
}

int main(void) {
  setup_stdout();
  void* blocks[kBlocks];
  parent_blocks(blocks);
  fflush(stdout);
  const pid_t child = fork();
  if (child < 0) die("fork");
  if (child == 0) {
    child_frees(blocks);
    exit(0);
  }
  int status = 0;
  if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) die("child");
  for (int i = 0; i < kBlocks; ++i) free(blocks[i]);
  printf("fork_frees_inherited: the child freed %d inherited blocks\n", kBlocks);
  return 0;
}
