// Its library installed handlers for SIGUSR1 and SIGTERM before the recorder
// started; raises each twice, then leaks 1 x 6060 from leak_after_signals and
// exits 0. Prints how many of each its handlers saw.
#include <signal.h>

#include "common.h"

int early_handled(int signo);

NOINLINE static void leak_after_signals(void) { keep(malloc(6060)); }

int main(void) {
  setup_stdout();
  for (int i = 0; i < 2; ++i) {
    raise(SIGUSR1);
    raise(SIGTERM);
  }
  leak_after_signals();
  printf("early_handlers: SIGUSR1 x %d, SIGTERM x %d\n", early_handled(SIGUSR1), early_handled(SIGTERM));
  return 0;
}
