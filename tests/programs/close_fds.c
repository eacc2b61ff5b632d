// Behaves like a daemon that closes every inherited descriptor: closes fds
// 3..1023, opens its own file (`close_fds OUTPUT`), which gets a low fd the
// recorder may have held, writes 100 known lines to it around leaking
// 1 x 7007 from leak_after_close, and closes it.
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common.h"

NOINLINE static void leak_after_close(void) { keep(malloc(7007)); }

int main(int argc, char** argv) {
  setup_stdout();
  if (argc < 2) die("usage: close_fds OUTPUT");
  for (int fd = 3; fd < 1024; ++fd) close(fd);
  const int out = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out < 0) die("open");
  char line[64];
  for (int i = 0; i < 100; ++i) {
    if (i == 50) leak_after_close();
    for (int j = 0; j < 100; ++j) free(malloc(64));  // events, so the recorder writes
    const int n = snprintf(line, sizeof line, "line %d of the program's own file\n", i);
    if (write(out, line, (size_t)n) != n) die("write");
  }
  close(out);
  printf("close_fds: wrote 100 lines\n");
  return 0;
}
