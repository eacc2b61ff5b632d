// Changes directory (`chdir_prog DIR`) before leaking 1 x 8008 from
// leak_after_chdir: a relative MEMREC_OUTPUT is relative to the directory the
// program started in.
#include <unistd.h>

#include "common.h"

NOINLINE static void leak_after_chdir(void) { keep(malloc(8008)); }

int main(int argc, char** argv) {
  setup_stdout();
  if (argc < 2) die("usage: chdir_prog DIR");
  if (chdir(argv[1]) != 0) die("chdir");
  leak_after_chdir();
  printf("chdir_prog: leaked 8008 after chdir\n");
  return 0;
}
