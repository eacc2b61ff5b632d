// libearly_handlers.so, linked into early_handlers: its constructor runs
// before libmemrec.so's and installs the program's own handlers for SIGUSR1
// and SIGTERM, which the recorder must leave to the program.
#include <signal.h>
#include <string.h>

static volatile sig_atomic_t g_handled[65];

static void count_signal(int signo) { ++g_handled[signo]; }

__attribute__((constructor)) static void install_handlers(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = count_signal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, NULL);
  sigaction(SIGTERM, &action, NULL);
}

__attribute__((visibility("default"))) int early_handled(int signo) { return g_handled[signo]; }
