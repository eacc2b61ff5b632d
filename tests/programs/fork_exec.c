// Starts leak_three (found beside this program) as a child and waits for it:
// `fork_exec fork|vfork|spawn|system`. The parent leaks 1 x 999 from
// parent_before_exec. The child's exec'd image must record into its own file.
#include <spawn.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

extern char** environ;

NOINLINE static void parent_before_exec(void) { keep(malloc(999)); }

int main(int argc, char** argv) {
  setup_stdout();
  const char* mode = argc > 1 ? argv[1] : "fork";
  char target[PATH_MAX + 64];
  beside_self(target, sizeof target, "leak_three");
  char* child_argv[] = {target, NULL};
  parent_before_exec();

  pid_t child = -1;
  int status = 0;
  if (strcmp(mode, "fork") == 0 || strcmp(mode, "vfork") == 0) {
    child = strcmp(mode, "fork") == 0 ? fork() : vfork();
    if (child < 0) die("fork");
    if (child == 0) {
      execv(target, child_argv);
      _exit(127);
    }
  } else if (strcmp(mode, "spawn") == 0) {
    if (posix_spawn(&child, target, NULL, NULL, child_argv, environ) != 0) die("posix_spawn");
  } else if (strcmp(mode, "system") == 0) {
    fflush(stdout);
    status = system(target);
  } else {
    die("mode");
  }
  if (child > 0 && waitpid(child, &status, 0) != child) die("waitpid");
  printf("fork_exec: %s child exited %d\n", mode, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
