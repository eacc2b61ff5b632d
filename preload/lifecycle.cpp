// When recording starts and stops. The library constructor opens the dump
// and starts the writer; the destructor (which runs after the program's
// atexit handlers and static destructors) writes the end. _exit, exec, the
// default-fatal signals SIGTERM/SIGINT/SIGHUP, and fork each get what they
// need; the toggle signal pauses and resumes.
#include "lifecycle.h"

#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "clock.h"
#include "fd_guard.h"
#include "log.h"
#include "malloc_owner.h"
#include "module_registry.h"
#include "options.h"
#include "order_stamp.h"
#include "real_allocator.h"
#include "recorder_state.h"
#include "stack_table.h"
#include "stamp_source.h"
#include "thread_buffer.h"
#include "thread_state.h"
#include "toggle_signal.h"
#include "unwind.h"
#include "writer.h"

namespace memrec::preload {

namespace {

constexpr std::uint64_t kExitFlushTimeoutNs = 10'000'000'000;
constexpr std::uint64_t kSignalFlushTimeoutNs = 5'000'000'000;

std::atomic<int> g_early{0};  // 0 not started, 1 running, 2 done
bool this_process_records() {
  return g_state.load(std::memory_order_relaxed) == RecorderState::kRecording &&
         static_cast<std::uint64_t>(getpid()) == recorded_pid();
}

// A default-fatal signal. Two ways to get here (docs/design/signals_and_exec.md):
// - The kernel ran us, our handler being the disposition: the program left
//   the signal at its default, so write the dump's end and die of the signal
//   as the program would have without us. Also when a program that had
//   replaced us put us back (it restored the `prev` its sigaction returned).
// - The program's own handler called us as the `prev` its sigaction
//   returned (signal-hook-registry, which tokio uses, and many daemons chain
//   so). Without us `prev` would have been SIG_DFL, which such a handler
//   never calls: return, and let the program shut down its own way; its
//   exit, _exit or exec ends the dump. No sync here: the program's handler
//   would wait for a frame's compression, and its exit comes soon.
// Installed without SA_SIGINFO, so a chaining handler reads
// `prev.sa_handler` and calls us with the signal alone; one that calls
// `prev.sa_sigaction(sig, info, ctx)` regardless passes two more arguments,
// which the x86-64 and AArch64 calling conventions let a one-argument
// function ignore.
void on_fatal_signal(int sig) {
  if (!handler_installed(sig, on_fatal_signal)) return;  // sigaction() that succeeds leaves errno alone
  if (this_process_records()) writer_finish(kSignalFlushTimeoutNs);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  raise(sig);  // blocked while we run; delivered, with the default action, when we return
}

// Installs `handler` only where the program left the default action: a
// program's own handler always wins (README, "SIGUSR1 already used").
void install_if_default(int sig, void (*handler)(int)) {
  struct sigaction old {};
  if (sigaction(sig, nullptr, &old) != 0) return;
  if ((old.sa_flags & SA_SIGINFO) != 0 || old.sa_handler != SIG_DFL) return;
  struct sigaction sa {};
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

// MEMREC_FOLLOW_EXEC=0: children that exec start without the preload.
void drop_preload_from_environment() {
  const char* preload = getenv("LD_PRELOAD");
  if (preload == nullptr) return;
  char kept[4096];
  std::size_t n = 0;
  const char* p = preload;
  while (*p != '\0') {
    while (*p == ':' || *p == ' ') ++p;
    const char* start = p;
    while (*p != '\0' && *p != ':' && *p != ' ') ++p;
    const std::string_view entry(start, static_cast<std::size_t>(p - start));
    if (entry.empty() || entry.find("libmemrec") != std::string_view::npos) continue;
    if (n + entry.size() + 2 > sizeof(kept)) break;
    if (n != 0) kept[n++] = ':';
    std::memcpy(kept + n, entry.data(), entry.size());
    n += entry.size();
  }
  kept[n] = '\0';
  if (n == 0) {
    unsetenv("LD_PRELOAD");
  } else {
    setenv("LD_PRELOAD", kept, 1);
  }
}

}  // namespace

void before_fork() { modules_lock(); }
void after_fork_parent() { modules_unlock(); }
void after_fork_child() {
  modules_unlock();
  if (g_state.load(std::memory_order_relaxed) != RecorderState::kRecording) return;
  HookScope scope(HookDepth::kInternal);
  close_guarded_after_fork();
  // Only this thread survives fork: its parent's undrained events and every
  // stack id belong to the parent's file. The child starts its own.
  for (auto& c : g_counters) c.store(0, std::memory_order_relaxed);
  reset_buffers_after_fork();
  if (t_thread.buffer != nullptr) count(format::Counter::kThreads);
  stack_table_reset();
  writer_restart_in_child();
}

void early_init() {
  int expected = 0;
  if (!g_early.compare_exchange_strong(expected, 1)) return;
  HookScope scope(HookDepth::kInternal);
  resolve_real_allocator();
  read_options();
  // Before the first stamp, the start's tick included.
  choose_stamp_source();
  publish_tick();
  g_enabled.store(!g_options.start_disabled, std::memory_order_relaxed);
  unwind_init();
  if (!stack_table_init() || !modules_init()) {
    log_line({"cannot reserve memory for the stack and module tables; recording stopped"});
    g_state.store(RecorderState::kStopped);
  }
  thread_exit_init();
  g_early.store(2, std::memory_order_release);
}

bool early_init_done() { return g_early.load(std::memory_order_acquire) == 2; }

void finish_before_exit() {
  if (!this_process_records()) return;
  // Modules are looked at on a new stack only: a library unloaded after the
  // last one would stay loaded in the dump. Look once more, here on the
  // exiting thread (not in on_fatal_signal, which may have interrupted a
  // holder of the loader's lock that dl_iterate_phdr takes).
  refresh_modules();
  writer_finish(kExitFlushTimeoutNs);
}

bool sync_before_exec(const char* path) {
  if (!this_process_records()) return false;
  writer_sync_before_exec(path, kExitFlushTimeoutNs);
  return true;
}

void note_exec_failed(int error) {
  if (this_process_records()) writer_note_exec_failed(error, now_ns());
}

bool park_before_going_alone() { return this_process_records() && writer_park(kExitFlushTimeoutNs); }

namespace {

[[gnu::constructor]] void memrec_start() {
  early_init();
  HookScope scope(HookDepth::kInternal);
  if (g_state.load() != RecorderState::kEarly) return;
  // Not chosen by MEMREC_ONLY: no writer, no dump, no handler; the
  // environment stays as it is for the children, which may be chosen.
  if (!selected_by_only()) {
    g_state.store(RecorderState::kIgnored);
    return;
  }
  check_malloc_owner();
  if (!g_options.follow_exec) drop_preload_from_environment();
  if (g_options.toggle_signal != 0) install_if_default(g_options.toggle_signal, on_toggle_signal);
  for (const int sig : {SIGTERM, SIGINT, SIGHUP}) {
    if (sig != g_options.toggle_signal) install_if_default(sig, on_fatal_signal);
  }
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  if (!writer_prepare()) {
    g_state.store(RecorderState::kStopped);
    return;
  }
  g_state.store(RecorderState::kRecording);
  // The writer starts when first needed (writer.h); a thread that a library's
  // constructor started before ours may need it already.
  if (g_recording_threads.load() >= 2) writer_start_lazily();
}

[[gnu::destructor]] void memrec_stop() {
  // libstdc++ keeps an emergency exception pool until asked to free it (as
  // valgrind does): free it while recording, so it is not reported as a leak.
  using Freeres = void (*)();
  Freeres freeres = nullptr;
  {
    HookScope scope(HookDepth::kLibdl);  // dlsym's own allocations are ours, its frees maybe not
    freeres = reinterpret_cast<Freeres>(dlsym(RTLD_DEFAULT, "_ZN9__gnu_cxx9__freeresEv"));
  }
  if (freeres != nullptr) freeres();
  finish_before_exit();
}

}  // namespace
}  // namespace memrec::preload
