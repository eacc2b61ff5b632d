// A program that owns SIGUSR1 (its own handler counts it) and does what its
// stdin says, one command a line, answering "ok" on stdout, so a test can
// drive `memrec ctl` between its steps:
//   warm          64 mallocs and frees: the recorder's writer (and its control socket) starts
//   run first     alloc_first:      one block of 1111 bytes, kept
//   run paused    alloc_paused:     one block of 2222 bytes, kept
//   run resumed   alloc_resumed:    one block of 3333 bytes, kept
//   run marked    alloc_marked:     one block of 4444 bytes, kept
//   signal        raise(SIGUSR1)
//   fds           the numbers of its open descriptors, as /proc/self/fd lists them
//   fork          a child that warms up, prints "child PID" and waits for SIGTERM
//   reap          waits for that child; "ok STATUS"
//   exec          execs itself (same pid, same stdin and stdout); answers nothing
//   quit          prints how many SIGUSR1 it handled and exits 0
// It reads with read(2) and prints from a static buffer: nothing allocates
// but the blocks above.
#include <dirent.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>

#include "common.h"

static volatile sig_atomic_t g_handled;
static pid_t g_child;

static void own_handler(int signo) {
  (void)signo;
  ++g_handled;
}

NOINLINE static void alloc_first(void) { keep(malloc(1111)); }
NOINLINE static void alloc_paused(void) { keep(malloc(2222)); }
NOINLINE static void alloc_resumed(void) { keep(malloc(3333)); }
NOINLINE static void alloc_marked(void) { keep(malloc(4444)); }

NOINLINE static void warm(void) {
  for (int i = 0; i < 64; ++i) free(malloc(16));
}

// One line of stdin into `line` (without its newline); 0 at end of input.
static int read_line(char* line, size_t cap) {
  size_t n = 0;
  for (;;) {
    char c;
    const ssize_t got = read(0, &c, 1);
    if (got <= 0) return n > 0;
    if (c == '\n') break;
    if (n + 1 < cap) line[n++] = c;
  }
  line[n] = '\0';
  return 1;
}

static void print_fds(void) {
  // opendir would malloc: probe each number through /proc instead.
  char self[32];
  snprintf(self, sizeof self, "/proc/%d/fd", (int)getpid());
  char out[4096] = "fds";
  size_t used = 3;
  for (int fd = 0; fd < 1024; ++fd) {
    char path[64];
    snprintf(path, sizeof path, "%s/%d", self, fd);
    if (access(path, F_OK) == 0) used += (size_t)snprintf(out + used, sizeof out - used, " %d", fd);
  }
  printf("%s\n", out);
}

int main(void) {
  setup_stdout();
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = own_handler;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGUSR1, &action, NULL) != 0) die("sigaction");
  char line[128];
  while (read_line(line, sizeof line)) {
    if (strcmp(line, "warm") == 0) {
      warm();
    } else if (strcmp(line, "run first") == 0) {
      alloc_first();
    } else if (strcmp(line, "run paused") == 0) {
      alloc_paused();
    } else if (strcmp(line, "run resumed") == 0) {
      alloc_resumed();
    } else if (strcmp(line, "run marked") == 0) {
      alloc_marked();
    } else if (strcmp(line, "signal") == 0) {
      if (raise(SIGUSR1) != 0) die("raise");
    } else if (strcmp(line, "fds") == 0) {
      print_fds();
      continue;
    } else if (strcmp(line, "fork") == 0) {
      g_child = fork();
      if (g_child < 0) die("fork");
      if (g_child == 0) {
        warm();
        printf("child %d\n", (int)getpid());
        for (;;) pause();  // until SIGTERM
      }
      continue;  // the child's line says it is ready
    } else if (strcmp(line, "reap") == 0) {
      int status = 0;
      if (waitpid(g_child, &status, 0) != g_child) die("waitpid");
      printf("ok %d\n", status);
      continue;
    } else if (strcmp(line, "exec") == 0) {
      char* const args[] = {"ctl_target", NULL};
      execv("/proc/self/exe", args);
      die("execv");
    } else if (strcmp(line, "quit") == 0) {
      break;
    } else {
      printf("unknown %s\n", line);
      continue;
    }
    printf("ok\n");
  }
  printf("ctl_target: %d SIGUSR1 handled\n", (int)g_handled);
  return 0;
}
