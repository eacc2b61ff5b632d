// `dup2_threads R`: one thread dup2()s the write end of a pipe onto the
// kTargets lowest numbers above the pipe's (the program's first descriptors
// after 0, 1 and 2, so 3 and 4 without a recorder), checks
// after each that the number is still that pipe (same inode), and closes it
// again, R rounds, while the main thread starts short threads that each
// allocate (their first allocation is where a recorder sets a thread up). A
// recorder that opens a file on a program thread takes the lowest free number
// for a moment, which the dup2() can replace (the recorder then reads and
// closes the program's descriptor) or meet mid-open (dup2 fails with EBUSY).
// Prints "dup2_threads: R rounds, pipe P Q, L lost, F failed dup2, low fds:
// ..." with the descriptors below 100 left open at the end, and exits 0 when
// none was lost and no dup2 failed (1 otherwise).
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "common.h"

enum { kTargets = 8, kThreadsAtOnce = 4 };

static int g_pipe[2];
static ino_t g_pipe_inode;
static long g_rounds = 2000;
static atomic_int g_done;
static long g_lost;
static long g_failed;

NOINLINE static void thread_allocates(void) {
  void* blocks[4];
  for (int i = 0; i < 4; ++i) blocks[i] = malloc((size_t)(32 + i * 16));
  for (int i = 0; i < 4; ++i) free(blocks[i]);
}

static void* short_thread(void* arg) {
  (void)arg;
  thread_allocates();
  return NULL;
}

static void* dupper(void* arg) {
  (void)arg;
  const int first = g_pipe[1] + 1;
  const int last = first + kTargets - 1;
  for (long round = 0; round < g_rounds; ++round) {
    for (int fd = first; fd <= last; ++fd) {
      if (dup2(g_pipe[1], fd) != fd) {
        ++g_failed;
        continue;
      }
      sched_yield();  // leave room for a recorder's read and close in between
      struct stat st;
      if (fstat(fd, &st) != 0 || st.st_ino != g_pipe_inode) ++g_lost;
    }
    for (int fd = first; fd <= last; ++fd) close(fd);
  }
  atomic_store(&g_done, 1);
  return NULL;
}

int main(int argc, char** argv) {
  setup_stdout();
  if (argc > 1) g_rounds = atol(argv[1]);
  if (g_rounds < 1) die("arguments");
  if (pipe(g_pipe) != 0) die("pipe");
  struct stat st;
  if (fstat(g_pipe[1], &st) != 0) die("fstat");
  g_pipe_inode = st.st_ino;
  pthread_t dup_thread;
  if (pthread_create(&dup_thread, NULL, dupper, NULL) != 0) die("pthread_create");
  while (!atomic_load(&g_done)) {
    pthread_t ids[kThreadsAtOnce];
    for (int i = 0; i < kThreadsAtOnce; ++i) {
      if (pthread_create(&ids[i], NULL, short_thread, NULL) != 0) die("pthread_create");
    }
    for (int i = 0; i < kThreadsAtOnce; ++i) pthread_join(ids[i], NULL);
  }
  pthread_join(dup_thread, NULL);
  // The descriptors below 100 now open, from this program thread's view.
  char low[256] = "";
  size_t used = 0;
  for (int fd = 0; fd < 100; ++fd) {
    struct stat fd_st;
    if (fstat(fd, &fd_st) == 0) used += (size_t)snprintf(low + used, sizeof low - used, " %d", fd);
  }
  printf("dup2_threads: %ld rounds, pipe %d %d, %ld lost, %ld failed dup2, low fds:%s\n", g_rounds, g_pipe[0],
         g_pipe[1], g_lost, g_failed, low);
  return g_lost == 0 && g_failed == 0 ? 0 : 1;
}
