// `fork_dup2 N`: forks N children, at most 8 at a time, each of which dup2()s
// the write end of a pipe onto descriptor 3 (the lowest free number, which a
// recorder opening files in the child would take for a moment) again and
// again while it allocates, and checks each time that descriptor 3 is still
// that pipe (same inode) and takes a write. A recorder that opens a file on
// 3, then moves it high and closes 3, closes the child's pipe if the child's
// dup2() came in between. Prints "N children, L lost descriptors" and exits 0
// when no child lost it (1 otherwise). Children leave by exit(), so each
// writes its dump.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

enum { kInFlight = 8, kTarget = 3, kPipeRead = 20, kPipeWrite = 21 };
static const long long kChildNs = 2000000;

NOINLINE static void child_work(int round) {
  void* blocks[8];
  for (int i = 0; i < 8; ++i) blocks[i] = malloc((size_t)(round * 8 + i * 24 + 16));
  for (int i = 0; i < 8; ++i) free(blocks[i]);
}

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// 0: fd 3 stayed the pipe's write end throughout.
static int child(ino_t pipe_ino) {
  const long long end = now_ns() + kChildNs;
  for (int round = 0; now_ns() < end; round = (round + 1) % 64) {
    if (dup2(kPipeWrite, kTarget) != kTarget) return 1;
    child_work(round);
    struct stat st;
    if (fcntl(kTarget, F_GETFD) < 0 || fstat(kTarget, &st) != 0 || st.st_ino != pipe_ino) return 1;
    if (write(kTarget, "x", 1) != 1) return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  setup_stdout();
  const int n = argc > 1 ? atoi(argv[1]) : 100;
  int fds[2];
  if (pipe(fds) != 0) die("pipe");
  // Out of the way, so that 3 is the lowest free number in every child.
  if (dup2(fds[0], kPipeRead) < 0 || dup2(fds[1], kPipeWrite) < 0) die("dup2");
  close(fds[0]);
  close(fds[1]);
  close(kTarget);
  // The children's bytes are not read: a pipe that fills would block them.
  fcntl(kPipeWrite, F_SETFL, O_NONBLOCK);
  struct stat st;
  if (fstat(kPipeWrite, &st) != 0) die("fstat");
  int lost = 0;
  int running = 0;
  char drain[4096];
  for (int started = 0; started < n || running > 0;) {
    if (started < n && running < kInFlight) {
      const pid_t pid = fork();
      if (pid < 0) die("fork");
      if (pid == 0) exit(child(st.st_ino));
      ++started;
      ++running;
      continue;
    }
    int status = 0;
    if (wait(&status) < 0) die("wait");
    --running;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++lost;
    fcntl(kPipeRead, F_SETFL, O_NONBLOCK);
    while (read(kPipeRead, drain, sizeof drain) > 0) {
    }
  }
  printf("%d children, %d lost descriptors\n", n, lost);
  return lost == 0 ? 0 : 1;
}
