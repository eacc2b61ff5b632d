// Leaks 1 x 6006 from leak_before_exec, then replaces itself with leak_three
// (found beside it) by execv without forking: the events before the exec must
// reach a file of their own.
#include <unistd.h>

#include "common.h"

NOINLINE static void leak_before_exec(void) { keep(malloc(6006)); }

int main(void) {
  setup_stdout();
  char target[PATH_MAX + 64];
  beside_self(target, sizeof target, "leak_three");
  leak_before_exec();
  printf("exec_replace: leaked 6006, now exec\n");
  char* child_argv[] = {target, NULL};
  execv(target, child_argv);
  die("execv");
}
