// rusage_run RESULT [NAME=VALUE...] -- PROGRAM [ARGS...]
// Runs PROGRAM with NAME=VALUE added to its environment, waits for it and
// writes one line to RESULT: "wall_ns user_ns sys_ns maxrss_kib exit_code".
// scripts/bench starts every measured process through this. It exists because
// Linux keeps the largest RSS a process had before execve() in ru_maxrss, and
// a child that Python spawns starts as a copy (or vfork) of the Python process:
// forked from this small program instead, the target's ru_maxrss is its own.
// The NAME=VALUE pairs (LD_PRELOAD, say) reach the target only, never this
// program. Exits 0 when RESULT was written, 127 when it could not run PROGRAM.
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long long to_ns(struct timeval tv) { return (long long)tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL; }

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char** argv) {
  int separator = 2;
  while (separator < argc && strcmp(argv[separator], "--") != 0) ++separator;
  if (argc < 2 || separator + 1 >= argc) {
    fprintf(stderr, "usage: rusage_run RESULT [NAME=VALUE...] -- PROGRAM [ARGS...]\n");
    return 127;
  }
  const long long start_ns = now_ns();
  const pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "rusage_run: fork: %s\n", strerror(errno));
    return 127;
  }
  if (pid == 0) {
    for (int i = 2; i < separator; ++i) {
      if (putenv(argv[i]) != 0) _exit(127);
    }
    execvp(argv[separator + 1], argv + separator + 1);
    fprintf(stderr, "rusage_run: cannot run %s: %s\n", argv[separator + 1], strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage usage;
  while (wait4(pid, &status, 0, &usage) < 0) {
    if (errno != EINTR) {
      fprintf(stderr, "rusage_run: wait4: %s\n", strerror(errno));
      return 127;
    }
  }
  const long long wall_ns = now_ns() - start_ns;
  const int exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  FILE* out = fopen(argv[1], "w");
  if (out == NULL) {
    fprintf(stderr, "rusage_run: cannot write %s: %s\n", argv[1], strerror(errno));
    return 127;
  }
  fprintf(out, "%lld %lld %lld %ld %d\n", wall_ns, to_ns(usage.ru_utime), to_ns(usage.ru_stime), usage.ru_maxrss,
          exit_code);
  return fclose(out) == 0 ? 0 : 127;
}
