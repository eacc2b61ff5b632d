// A signal handler that allocates: `signal_alloc K` (default 100). A second
// thread sends SIGUSR2 to the main thread K times in each of two phases,
// waiting for each to be handled before the next. The handler leaks 1 x 2024
// bytes, from leak_while_quiet() in the first phase (the main thread waits in
// sigsuspend(), outside every hooked function) and from leak_while_busy() in the
// second (the main thread maps and unmaps a page in a loop, so a signal may
// land inside the recorder's mmap hook). The handler makes no other
// allocation. It prints how many signals were handled and exits 0.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <time.h>

#include "common.h"

static volatile sig_atomic_t g_busy_phase;
static long g_handled;  // written by the handler only, read with atomics
static long g_rounds;
static pthread_t g_main;

NOINLINE static void leak_while_quiet(void) { keep(malloc(2024)); }
NOINLINE static void leak_while_busy(void) { keep(malloc(2024)); }

static void on_signal(int sig) {
  (void)sig;
  if (g_busy_phase) {
    leak_while_busy();
  } else {
    leak_while_quiet();
  }
  __atomic_add_fetch(&g_handled, 1, __ATOMIC_RELEASE);
}

static long handled(void) { return __atomic_load_n(&g_handled, __ATOMIC_ACQUIRE); }

static void* sender(void* arg) {
  (void)arg;
  for (long phase = 0; phase < 2; ++phase) {
    for (long k = 0; k < g_rounds; ++k) {
      const long before = handled();
      if (pthread_kill(g_main, SIGUSR2) != 0) die("pthread_kill");
      while (handled() == before) {
        const struct timespec pause = {0, 20000};
        nanosleep(&pause, NULL);
      }
    }
    // The main thread moves to the busy phase once it sees all K.
    while (phase == 0 && !g_busy_phase) sched_yield();
  }
  return NULL;
}

int main(int argc, char** argv) {
  setup_stdout();
  g_rounds = argc > 1 ? atol(argv[1]) : 100;
  g_main = pthread_self();
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(SIGUSR2, &sa, NULL) != 0) die("sigaction");
  // Blocked but while in sigsuspend(), so no signal slips in between the
  // check and the wait.
  sigset_t usr2, waiting;
  sigemptyset(&usr2);
  sigaddset(&usr2, SIGUSR2);
  if (pthread_sigmask(SIG_BLOCK, &usr2, &waiting) != 0) die("pthread_sigmask");
  sigdelset(&waiting, SIGUSR2);
  pthread_t thread;
  if (pthread_create(&thread, NULL, sender, NULL) != 0) die("pthread_create");
  while (handled() < g_rounds) sigsuspend(&waiting);
  g_busy_phase = 1;
  if (pthread_sigmask(SIG_UNBLOCK, &usr2, NULL) != 0) die("pthread_sigmask");
  while (handled() < 2 * g_rounds) {
    void* page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) die("mmap");
    if (munmap(page, 4096) != 0) die("munmap");
  }
  if (pthread_join(thread, NULL) != 0) die("pthread_join");
  printf("signal_alloc: %ld signals handled\n", handled());
  return 0;
}
