// Shared helpers for the test programs: they must not allocate on their own,
// so every allocation a test asserts on is one the program makes on purpose.
#ifndef MEMREC_TEST_PROGRAMS_COMMON_H
#define MEMREC_TEST_PROGRAMS_COMMON_H

#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

// stdio would malloc() a buffer for stdout on the first printf and keep it
// until exit, which would show up as a leak from main. A static, line-buffered
// buffer avoids that, and flushes each line before a fork or a fatal signal.
static char g_stdout_buffer[4096];

static inline void setup_stdout(void) { setvbuf(stdout, g_stdout_buffer, _IOLBF, sizeof g_stdout_buffer); }

// Keeps leaked pointers reachable, so nothing optimizes the allocations away.
static void* volatile g_sink[64];
static unsigned g_sink_next;

static inline void keep(void* ptr) { g_sink[__atomic_fetch_add(&g_sink_next, 1, __ATOMIC_RELAXED) % 64] = ptr; }

__attribute__((noreturn)) static inline void die(const char* what) {
  fprintf(stderr, "%s failed\n", what);
  exit(99);
}

// `name` in the folder of this program's executable (the other test programs
// and libraries): PATH_MAX + 64 bytes are room enough.
static inline void beside_self(char* out, size_t size, const char* name) {
  char self[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) die("readlink");
  self[n] = '\0';
  snprintf(out, size, "%s/%s", dirname(self), name);
}

#endif
