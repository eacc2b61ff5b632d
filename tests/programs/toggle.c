// Turns recording off, on, off and on again by sending itself a signal
// (`toggle [SIGNUM [own-handler]]`, default SIGUSR1), leaking in each of the
// five phases from its own function:
//   leak_on1 1001, leak_off1 1002, leak_on2 1003, leak_off2 1004, leak_on3 1005.
// In phase on1 it also allocates blocks that it frees (free_kept) or reallocs
// (move_realloced) in phase off1: alloc_kept 2001, alloc_realloced 2002 ->
// 3002 leaked; while recording is paused neither may show as a leak. With
// `own-handler` the program handles the signal itself; with `chain-handler`
// it also calls the handler it replaced, as signal-hook-registry does.
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

static volatile sig_atomic_t g_handled;
static struct sigaction g_previous;

static void own_handler(int signo) {
  (void)signo;
  ++g_handled;
}

static void chain_handler(int signo) {
  ++g_handled;
  if (g_previous.sa_handler != SIG_DFL && g_previous.sa_handler != SIG_IGN) g_previous.sa_handler(signo);
}

NOINLINE static void leak_on1(void) { keep(malloc(1001)); }
NOINLINE static void leak_off1(void) { keep(malloc(1002)); }
NOINLINE static void leak_on2(void) { keep(malloc(1003)); }
NOINLINE static void leak_off2(void) { keep(malloc(1004)); }
NOINLINE static void leak_on3(void) { keep(malloc(1005)); }
NOINLINE static void* alloc_kept(void) { return malloc(2001); }
NOINLINE static void* alloc_realloced(void) { return malloc(2002); }
NOINLINE static void free_kept(void* ptr) { free(ptr); }
NOINLINE static void move_realloced(void* ptr) { keep(realloc(ptr, 3002)); }

static void toggle(int signo) {
  if (raise(signo) != 0) die("raise");
  usleep(20 * 1000);  // in case the recorder acts on the signal asynchronously
}

int main(int argc, char** argv) {
  setup_stdout();
  const int signo = argc > 1 ? atoi(argv[1]) : SIGUSR1;
  const int chain = argc > 2 && strcmp(argv[2], "chain-handler") == 0;
  if (chain || (argc > 2 && strcmp(argv[2], "own-handler") == 0)) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = chain ? chain_handler : own_handler;
    sigemptyset(&action.sa_mask);
    if (sigaction(signo, &action, &g_previous) != 0) die("sigaction");
  }

  leak_on1();
  void* kept = alloc_kept();
  void* realloced = alloc_realloced();
  toggle(signo);
  leak_off1();
  free_kept(kept);
  move_realloced(realloced);
  toggle(signo);
  leak_on2();
  toggle(signo);
  leak_off2();
  toggle(signo);
  leak_on3();
  printf("toggle: 4 signals sent, %d handled by the program\n", (int)g_handled);
  return 0;
}
