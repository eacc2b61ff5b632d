// Installs its own SIGTERM and SIGINT handlers after start, each chaining to
// the `prev` its sigaction() returned unless that is SIG_DFL or SIG_IGN, as
// signal-hook-registry (tokio) and many daemons do. The SIGTERM handler is a
// plain sa_handler and calls prev by prev's SA_SIGINFO flag; the SIGINT one
// is SA_SIGINFO and calls prev.sa_sigaction(sig, info, ctx) whatever prev's
// flags. Leaks 1 x 7007 from leak_before_signals, raises each signal once,
// leaks 1 x 8008 from leak_after_signals and exits 0: `signal_chain`.
// `signal_chain restore` then puts SIGTERM's prev back and raises it again,
// which ends it by SIGTERM. The tests assert that the exit code and output
// are those of the run without the preload, and the dump complete.
#include <signal.h>
#include <string.h>

#include "common.h"

static struct sigaction g_prev_term;
static struct sigaction g_prev_int;
static volatile sig_atomic_t g_term_seen;
static volatile sig_atomic_t g_int_seen;

NOINLINE static void leak_before_signals(void) { keep(malloc(7007)); }
NOINLINE static void leak_after_signals(void) { keep(malloc(8008)); }

static int is_default_or_ignored(const struct sigaction* prev) {
  return (prev->sa_flags & SA_SIGINFO) == 0 && (prev->sa_handler == SIG_DFL || prev->sa_handler == SIG_IGN);
}

static void on_term(int sig) {
  g_term_seen += 1;
  if (is_default_or_ignored(&g_prev_term)) return;
  if ((g_prev_term.sa_flags & SA_SIGINFO) != 0) {
    g_prev_term.sa_sigaction(sig, NULL, NULL);
  } else {
    g_prev_term.sa_handler(sig);
  }
}

static void on_int(int sig, siginfo_t* info, void* ctx) {
  g_int_seen += 1;
  if (!is_default_or_ignored(&g_prev_int)) g_prev_int.sa_sigaction(sig, info, ctx);
}

static void install(int sig, struct sigaction* sa, struct sigaction* prev) {
  sigemptyset(&sa->sa_mask);
  if (sigaction(sig, sa, prev) != 0) die("sigaction");
}

int main(int argc, char** argv) {
  setup_stdout();
  const int restore = argc > 1 && strcmp(argv[1], "restore") == 0;
  leak_before_signals();
  struct sigaction term = {0};
  term.sa_handler = on_term;
  install(SIGTERM, &term, &g_prev_term);
  struct sigaction intr = {0};
  intr.sa_sigaction = on_int;
  intr.sa_flags = SA_SIGINFO;
  install(SIGINT, &intr, &g_prev_int);
  raise(SIGTERM);
  raise(SIGINT);
  leak_after_signals();
  printf("signal_chain: SIGTERM x %d, SIGINT x %d, still alive\n", (int)g_term_seen, (int)g_int_seen);
  if (restore) {
    if (sigaction(SIGTERM, &g_prev_term, NULL) != 0) die("sigaction");
    printf("signal_chain: SIGTERM restored, raising it\n");
    raise(SIGTERM);
    printf("signal_chain: survived the restored SIGTERM\n");
    return 1;
  }
  return 0;
}
