// Leaks 1 x 6006 from leak_before_exec, then replaces itself with leak_three
// (found beside it) by execv without forking: the events before the exec must
// reach a file of their own, which ends by that exec. `exec_replace fail`
// first execv()s a path that does not exist, which returns -1 (ENOENT), then
// leaks 1 x 7007 from leak_after_failed_exec and exits 0 without exec'ing:
// the recording must go on and end cleanly with every event.
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

NOINLINE static void leak_before_exec(void) { keep(malloc(6006)); }
NOINLINE static void leak_after_failed_exec(void) { keep(malloc(7007)); }

int main(int argc, char** argv) {
  setup_stdout();
  char target[PATH_MAX + 64];
  beside_self(target, sizeof target, "leak_three");
  leak_before_exec();
  if (argc > 1 && strcmp(argv[1], "fail") == 0) {
    char* missing_argv[] = {"memrec-no-such-program", NULL};
    const int result = execv("/nonexistent/memrec-no-such-program", missing_argv);
    printf("exec_replace: leaked 6006, exec failed: %d %s\n", result, strerror(errno));
    leak_after_failed_exec();
    printf("exec_replace: leaked 7007 after it\n");
    return 0;
  }
  printf("exec_replace: leaked 6006, now exec\n");
  char* child_argv[] = {target, NULL};
  execv(target, child_argv);
  die("execv");
}
