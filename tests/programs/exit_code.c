// For `memrec run` tests: `exit_code N` leaks 1 x 100 from leak_once() and
// exits with status N; `exit_code kill SIG` leaks the same, then raises SIG.
#include <signal.h>
#include <string.h>

#include "common.h"

NOINLINE static void leak_once(void) { keep(malloc(100)); }

int main(int argc, char** argv) {
  setup_stdout();
  leak_once();
  if (argc > 2 && strcmp(argv[1], "kill") == 0) {
    signal(atoi(argv[2]), SIG_DFL);
    raise(atoi(argv[2]));
    return 99;
  }
  return argc > 1 ? atoi(argv[1]) : 0;
}
