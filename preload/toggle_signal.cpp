// The toggle signal's handler and the watch on its disposition (see
// toggle_signal.h). Called from a signal handler and the writer thread only.
#include "toggle_signal.h"

#include <atomic>
#include <cerrno>
#include <csignal>

#include "clock.h"
#include "options.h"
#include "recorder_state.h"
#include "writer.h"

namespace memrec::preload {
namespace {

// sigaction() is a syscall: a busy writer cycles every few tens of
// microseconds, and the time of a takeover needs no finer grain than this.
constexpr std::uint64_t kWatchEveryNs = 10'000'000;

std::atomic<std::uint64_t> g_taken_ns{0};
std::atomic<std::uint64_t> g_chained{0};
std::uint64_t g_last_watch_ns = 0;  // the writer thread's own

}  // namespace

void on_toggle_signal(int sig) {
  const int saved = errno;
  // Not the disposition: the program's handler called us as the `prev` its
  // sigaction returned (signal-hook-registry does), and the toggle works.
  if (!handler_installed(sig, on_toggle_signal)) g_chained.fetch_add(1, std::memory_order_relaxed);
  const bool on = !g_enabled.load(std::memory_order_relaxed);
  g_enabled.store(on, std::memory_order_relaxed);
  note_recording_toggle(on, now_ns(), format::Source::kSignal);
  errno = saved;
}

bool handler_installed(int sig, void (*handler)(int)) {
  struct sigaction now {};
  return sigaction(sig, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) == 0 && now.sa_handler == handler;
}

void watch_toggle_signal(std::uint64_t now_ns, bool force) {
  const int sig = g_options.toggle_signal;
  if (sig == 0 || g_taken_ns.load(std::memory_order_relaxed) != 0) return;
  if (!force && now_ns - g_last_watch_ns < kWatchEveryNs) return;
  g_last_watch_ns = now_ns;
  // Also true when the recorder never installed it (a handler set before its
  // constructor, an ignored signal inherited): the toggle never worked.
  if (!handler_installed(sig, on_toggle_signal)) g_taken_ns.store(now_ns, std::memory_order_relaxed);
}

std::uint64_t toggle_taken_ns() { return g_taken_ns.load(std::memory_order_relaxed); }
std::uint64_t toggle_chained() { return g_chained.load(std::memory_order_relaxed); }

}  // namespace memrec::preload
