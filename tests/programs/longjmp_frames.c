// longjmp() out of allocating frames: `longjmp_frames N` (default 200) runs N
// rounds; each descends 10 levels of descend(), where every level takes a
// block of 100 + level bytes from frame_alloc() and would free it on return,
// and the deepest level longjmp()s back to main, so no level returns. main
// then frees the blocks of the even levels; the odd levels' blocks leak:
// N x (101 + 103 + 105 + 107 + 109) bytes in 5 N blocks. Every 4th round
// jumps with siglongjmp from inside a SIGUSR2 handler instead.
#include <setjmp.h>
#include <signal.h>

#include "common.h"

enum { kLevels = 10 };

static sigjmp_buf g_top;
static void* g_blocks[kLevels];
static volatile sig_atomic_t g_from_handler;

NOINLINE static void* frame_alloc(size_t size) { return malloc(size); }

static void jump_from_handler(int sig) {
  (void)sig;
  siglongjmp(g_top, 2);
}

NOINLINE static void descend(int level) {
  void* mine = frame_alloc(100 + (size_t)level);
  if (mine == NULL) die("malloc");
  g_blocks[level] = mine;
  if (level + 1 == kLevels) {
    if (g_from_handler) raise(SIGUSR2);
    siglongjmp(g_top, 1);
  }
  descend(level + 1);
  free(mine);  // never reached: the deepest level jumps over every return
}

int main(int argc, char** argv) {
  setup_stdout();
  const long rounds = argc > 1 ? atol(argv[1]) : 200;
  struct sigaction sa = {0};
  sa.sa_handler = jump_from_handler;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR2, &sa, NULL) != 0) die("sigaction");
  static long jumps[3];
  for (long i = 0; i < rounds; ++i) {
    g_from_handler = i % 4 == 3;
    const int how = sigsetjmp(g_top, 1);
    if (how == 0) descend(0);
    jumps[how] += 1;
    for (int level = 0; level < kLevels; level += 2) free(g_blocks[level]);
  }
  printf("longjmp_frames: %ld jumps from the deepest frame, %ld from a signal handler\n", jumps[1], jumps[2]);
  return 0;
}
