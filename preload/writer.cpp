// The main writer thread (see writer.h). One cycle: note the heads of the
// rings it drains (those of the lists no pool writer runs for: writer_pool.h),
// write the stacks and modules defined so far, then drain the rings up to
// those heads. Taking the heads first guarantees that every stack an event
// uses is written before that event (FORMAT.md, "Stack").
#include "writer.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>

#include "clock.h"
#include "control_socket.h"
#include "dump_file.h"
#include "event_coder.h"
#include "fd_guard.h"
#include "frame_compressor.h"
#include "log.h"
#include "memrec/format/record_encoder.h"
#include "module_registry.h"
#include "options.h"
#include "order_stamp.h"
#include "os.h"
#include "proc_sampler.h"
#include "recorder_state.h"
#include "thread_buffer.h"
#include "thread_state.h"
#include "toggle_signal.h"
#include "writer_pool.h"

namespace memrec::preload {
namespace {

std::atomic<std::uint32_t> g_wake{0};
std::atomic<std::uint32_t> g_finish_requested{0};
std::atomic<std::uint32_t> g_finish_done{0};
std::atomic<bool> g_started{false};
// Claimed once per process by whoever starts the writer
// (writer_start_lazily) or writes the dump without one (writer_finish).
std::atomic<bool> g_launched{false};
std::atomic<std::uint32_t> g_sync_requested{0};
std::atomic<std::uint32_t> g_sync_done{0};
// launch(eager): the writer opens the dump first and reports (1 opened, 2
// failed) to launch(), which waits for it.
std::atomic<bool> g_open_eagerly{false};
std::atomic<std::uint32_t> g_open_result{0};

// Parking (writer_park, docs/design/single_threaded.md): the writer writes
// what is recorded as a frame, closes its descriptors, sets g_parked
// (release; the parker's acquire pairs) and ends; the parker joins it. The
// next writer takes the dump from g_handover_fd, a descriptor the parker
// opened in the program's table, and reports through g_open_result.
std::atomic<std::uint32_t> g_park_requested{0};
std::atomic<std::uint32_t> g_parked{0};
std::atomic<int> g_handover_fd{-1};
std::atomic<std::uint64_t> g_writer_tid{0};
pthread_t g_thread;

// An exec about to happen (writer_sync_before_exec): the thread that wins
// g_exec_claim (its acquire pairs with the release that frees it, so the
// next winner's copy follows the last one's) copies the path to
// g_exec_request and sets g_exec_requested (release; the writer's acquire
// pairs with it) before it asks for a sync; the writer serving that sync
// ends the frame with an Exec record.
constexpr std::size_t kExecPathBytes = 4096;
std::atomic<bool> g_exec_claim{false};
std::atomic<bool> g_exec_requested{false};
constinit char g_exec_request[kExecPathBytes] = {};
// An exec that returned: its errno (0: nothing to note) and when. The
// release store of the errno publishes the time; the writer's exchange pairs.
std::atomic<std::uint32_t> g_exec_error{0};
std::atomic<std::uint64_t> g_exec_error_ns{0};

// The writer thread's own state; the components it drives keep theirs
// (g_dump, g_compressor, g_coder, g_proc).
struct Cycle {
  char exec_path[kExecPathBytes] = {};  // of the last Exec record, for the one noting its failure
  std::uint64_t noted_ns = 0;           // when the last cycle noted the rings' heads
  std::uint64_t gap_ns = 0;             // the time from the cycle before to it
  std::uint64_t parked_cpu_ns = 0;      // CPU time of the writer threads that parked
};
constinit Cycle g_cycle;
// Set on the writer thread for its life (writer_cpu_ns).
constinit thread_local bool t_writer = false;

// Copies the C string `from` into `to`, cut to fit with its NUL.
template <std::size_t N>
void copy_path(char (&to)[N], const char* from) {
  std::size_t n = 0;
  while (n + 1 < N && from[n] != '\0') {
    to[n] = from[n];
    ++n;
  }
  to[n] = '\0';
}

// An exec announced by an Exec record returned: note its errno, and the
// recording goes on (FORMAT.md, "Exec").
void write_exec_failure() {
  const std::uint32_t error = g_exec_error.exchange(0, std::memory_order_acquire);
  if (error == 0) return;
  const std::uint64_t time_ns = g_exec_error_ns.load(std::memory_order_relaxed);
  g_coder.put_record([&](format::RecordEncoder& enc) { return enc.exec(time_ns, error, g_cycle.exec_path); });
}

// ---- one cycle ----------------------------------------------------------

// Calls `fn` with each list of buffers the main writer drains now.
template <typename Fn>
void for_own_lists(Fn&& fn) {
  for (std::uint32_t w = 0; w < kMaxWriters; ++w) {
    if (!pool_runs(w)) fn(w);
  }
}

void cycle() {
  // Pairs with order_stamp()'s acquire: see order_stamp.h.
  publish_tick();
  if (stamp_tsc()) tsc_map_steer();
  g_coder.write_modules();
  const std::uint64_t noted = now_ns();
  g_cycle.gap_ns = noted - g_cycle.noted_ns;
  g_cycle.noted_ns = noted;
  for_own_lists([](std::uint32_t w) {
    for (ThreadBuffer* b = g_buffers[w].load(std::memory_order_acquire); b != nullptr;
         b = b->next.load(std::memory_order_acquire)) {
      // Pairs with commit()'s release store: events up to here are complete.
      b->drain_to = b->head.load(std::memory_order_acquire);
    }
  });
  g_coder.write_stacks();
  g_coder.write_toggles();
  write_exec_failure();
  const std::uint64_t now = now_ns();
  watch_toggle_signal(now);
  const bool poll = g_proc.names_due(now);
  g_coder.begin_cycle();
  // Only lists whose heads were noted above: a pool writer that started
  // since is not the main writer's concern, and none starts during a cycle.
  for_own_lists([poll](std::uint32_t w) {
    for (ThreadBuffer* b = g_buffers[w].load(std::memory_order_acquire); b != nullptr;
         b = b->next.load(std::memory_order_acquire)) {
      g_coder.drain(*b, b->drain_to);
      if (poll) g_coder.poll_name(*b);
    }
  });
  if (std::uint64_t rss = 0; g_proc.sample_rss(now, rss)) {
    g_coder.put_record([&](format::RecordEncoder& enc) { return enc.rss(now, rss); });
  }
  for_own_lists([](std::uint32_t w) { retire_threads(g_coder, w, g_dump.origin().pid); });
  g_compressor.step();
  // `now` was read before the drains, which may have ended a full frame
  // since: a frame flushed after it is not overdue. (Without this check the
  // difference wrapped, and every full frame was followed by a frame of the
  // few events drained after it: sqlite3's dump had 55 frames instead of 28.)
  const std::uint64_t last_flush_ns = g_coder.last_flush_ns();
  if (!g_coder.frame_empty() && now > last_flush_ns &&
      now - last_flush_ns >= g_options.flush_interval_ms * 1000000ull) {
    g_coder.flush_frame(false);
  }
}

// Places the stacks a pool writer's frame waits for: a frame of the main
// writer that defines them, written whole now.
void serve_stacks() {
  if (!stacks_wanted()) return;
  g_coder.write_stacks();
  g_coder.flush_frame(false, /*complete=*/true);
}

// Before a pool writer takes over a list the main writer drained: what it
// drained goes to the file first.
void hand_over() { g_coder.flush_frame(false, /*complete=*/true); }

void finish() {
  control_close();
  cycle();
  // New events stop here; a second cycle takes what was committed meanwhile,
  // in every list once the pool writers wrote theirs (the End record is last).
  g_state.store(RecorderState::kFinished, std::memory_order_relaxed);
  pool_stop_all(serve_stacks);
  cycle();
  g_coder.flush_frame(true);
  g_dump.close();
  g_proc.close();
}

std::uint64_t sleep_ns(std::uint64_t now) {
  const EventCoder::CycleDrains& drains = g_coder.drains();
  if (drains.busy || g_compressor.compressing()) return 0;
  // While events flow, wake again by the time the fastest ring is a quarter
  // full at the rate it filled since the cycle before: the next cycle then
  // finds it busy and stays awake. A thread that allocates fast fills its ring
  // in a quarter of a millisecond, and a writer that slept longer made it
  // wait for room (bench churn: 1,128 waits, 0.2 s of its 0.52). While the
  // program is quiet, look rarely.
  std::uint64_t wait = 5000000;
  if (drains.drained) {
    const std::uint64_t per_event = g_cycle.gap_ns / (drains.most_drained != 0 ? drains.most_drained : 1);
    wait = per_event * (ThreadBuffer::kSlots / 4);
    if (wait > 300000) wait = 300000;
  }
  const std::uint64_t flush_at = g_coder.last_flush_ns() + g_options.flush_interval_ms * 1000000ull;
  if (flush_at > now && flush_at - now < wait) wait = flush_at - now;
  return wait < 20000 ? 20000 : wait;
}

// The writer leaves for good (finished, or failed): nobody joins it.
void* end_unjoined() {
  pthread_detach(pthread_self());
  return nullptr;
}

// Everything recorded goes to the file before the thread ends; its
// descriptors die with its table, so forget them (the next writer reopens
// what it needs).
void park() {
  control_close();
  g_ticking.store(false, std::memory_order_release);
  pool_stop_all(serve_stacks);
  cycle();
  g_coder.flush_frame(false, /*complete=*/true);
  g_dump.close();
  g_proc.close();
  g_cycle.parked_cpu_ns += thread_cpu_ns();
  g_parked.store(1, std::memory_order_release);
  os::futex_wake_all(g_parked);
}

void* writer_main(void*) {
  t_thread.depth = HookDepth::kInternal;  // for life: nothing this thread does is recorded
  t_writer = true;
  sigset_t all;
  sigfillset(&all);
  // Signals go to the program's threads; SIGXFSZ from our writes turns into EFBIG.
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  prctl(PR_SET_NAME, "memrec-writer", 0, 0, 0);
  // Its sleeps are tens of microseconds (sleep_ns): the default 50 us of
  // timer slack would double them.
  prctl(PR_SET_TIMERSLACK, 5000, 0, 0, 0);
  // Every descriptor the recorder keeps (the dump, statm, stat) and those it
  // opens for a moment (cmdline, threads' comm) live in this thread's own
  // table: in the program's, even a moment on its lowest free number races
  // with its threads' dup2() onto that number (docs/design/descriptors.md).
  // Hence the dump is opened here, not by launch() on the program's thread.
  use_private_descriptors();
  g_writer_tid.store(os::gettid(), std::memory_order_relaxed);
  if (const int handover = g_handover_fd.load(std::memory_order_acquire); handover >= 0) {
    // After a park: the dump, from the program's table into ours.
    if (has_private_descriptors()) {
      g_dump.set_fd(borrow_program_fd(handover, O_WRONLY));
    } else {
      g_dump.set_fd(g_handover_fd.exchange(-1));  // adopted: guarded in the program's table like the rest
    }
    if (g_dump.fd() < 0) g_dump.fail("cannot take back the dump after a namespace change: ", errno);
    g_open_result.store(g_dump.fd() >= 0 ? 1 : 2, std::memory_order_release);
    os::futex_wake_all(g_open_result);
  } else if (g_dump.opened() && g_dump.fd() < 0) {
    // The constructor wrote the header and closed it: ours from here on.
    g_dump.set_fd(g_dump.reopen(/*high=*/false));
    if (g_dump.fd() < 0) g_dump.fail("cannot reopen the dump ", errno);
    g_open_result.store(g_dump.fd() >= 0 ? 1 : 2, std::memory_order_release);
    os::futex_wake_all(g_open_result);
    if (g_dump.fd() < 0) return end_unjoined();
  } else if (g_open_eagerly.load(std::memory_order_acquire)) {
    const bool opened = g_dump.open(g_compressor.scratch());
    g_open_result.store(opened ? 1 : 2, std::memory_order_release);
    os::futex_wake_all(g_open_result);
    if (!opened) return end_unjoined();
  }
  control_listen(g_dump.origin().pid);
  publish_tick();
  // Release pairs with order_stamp()'s acquire: a lone thread takes ticks from now on.
  g_ticking.store(true, std::memory_order_release);
  for (;;) {
    const std::uint32_t seq = g_wake.load(std::memory_order_acquire);
    if (!g_dump.failed()) pool_start_needed(hand_over);
    cycle();
    serve_stacks();
    if (g_dump.failed() && g_dump.fd() >= 0) {
      g_state.store(RecorderState::kStopped, std::memory_order_relaxed);
      pool_stop_all([] {});
      g_dump.close();
    }
    if (const std::uint32_t sync = g_sync_requested.load(std::memory_order_acquire); sync != g_sync_done.load()) {
      // Read before the cycle above? No: a request that arrived during it may
      // miss events committed before it, so run one more cycle first. The
      // pool writers write theirs first: the Exec record ends the file.
      pool_stop_all(serve_stacks);
      cycle();
      const char* exec_path = nullptr;
      if (g_exec_requested.load(std::memory_order_acquire)) {
        copy_path(g_cycle.exec_path, g_exec_request);
        exec_path = g_cycle.exec_path;
      }
      g_coder.flush_frame(false, /*complete=*/true, exec_path);
      g_sync_done.store(sync, std::memory_order_release);
      os::futex_wake_all(g_sync_done);
    }
    if (g_finish_requested.load(std::memory_order_acquire) != 0 || g_dump.failed()) {
      if (!g_dump.failed()) finish();
      g_finish_done.store(1, std::memory_order_release);
      os::futex_wake_all(g_finish_done);
      return end_unjoined();
    }
    if (g_park_requested.load(std::memory_order_acquire) != 0) {
      park();
      return nullptr;  // joined by writer_park()
    }
    if (g_proc.only_writer_left(now_ns(), 1 + pool_running())) {
      finish();
      g_finish_done.store(1, std::memory_order_release);
      os::futex_wake_all(g_finish_done);
      // Atexit handlers and destructors run now, as after the last thread's
      // exit; our own destructor finds the dump finished.
      exit(0);
    }
    control_serve(now_ns());
    const std::uint64_t wait = sleep_ns(now_ns());
    if (wait == 0) {
      sched_yield();
    } else {
      os::futex_wait(g_wake, seq, wait);
    }
  }
}

// Starts the writer thread; with `eager` or a handover, waits until it has
// its dump. Joinable: writer_park() joins it, and it detaches itself when it
// ends otherwise.
bool start_thread(bool eager) {
  g_open_eagerly.store(eager, std::memory_order_relaxed);
  g_open_result.store(0, std::memory_order_relaxed);
  const bool wait = eager || g_handover_fd.load(std::memory_order_relaxed) >= 0;
  const int err = pthread_create(&g_thread, nullptr, writer_main, nullptr);
  if (err != 0) {
    log_line({"cannot start the writer thread: ", errno_text(err), "; recording stopped, the program goes on"});
    return false;
  }
  if (wait) {
    std::uint32_t result;
    while ((result = g_open_result.load(std::memory_order_acquire)) == 0) os::futex_wait(g_open_result, 0, 0);
    if (result != 1) return false;
  }
  g_started.store(true, std::memory_order_release);
  return true;
}

// Everything launch() does but start the thread.
bool prepare_launch() {
  // The recording started at the first hook (early_init's tick), before our
  // constructor ran: events from then on must not precede the start.
  const std::uint64_t mono = now_ns();
  const std::uint64_t wall = wall_ns();
  const std::uint64_t tick_stamp = g_tick_ns.load(std::memory_order_acquire);
  const std::uint64_t tick = tick_stamp != 0 ? stamp_to_ns(tick_stamp) : 0;
  DumpOrigin& origin = g_dump.origin();
  origin.start_mono_ns = tick != 0 && tick < mono ? tick : mono;
  origin.start_wall_ns = wall - (mono - origin.start_mono_ns);
  g_coder.start(origin.start_mono_ns);
  g_proc.start(origin.start_mono_ns);
  pool_configure();
  if (!g_dump.setup() || !g_compressor.setup() || !g_coder.setup()) {
    log_line({"cannot set up the writer's buffers; recording stopped, the program goes on"});
    return false;
  }
  return true;
}

// A process that ends before anything started its writer: this thread
// writes the dump itself (it may be in a signal handler, where starting a
// thread could wait for a malloc lock the interrupted code holds).
void finish_without_writer() {
  HookScope scope(HookDepth::kInternal);
  if (g_dump.opened() && g_dump.fd() < 0) {
    g_dump.set_fd(g_dump.reopen(/*high=*/true));
    if (g_dump.fd() < 0) {
      g_dump.fail("cannot reopen the dump ", errno);
      return;
    }
  }
  finish();
  g_finish_done.store(1, std::memory_order_release);
}

}  // namespace

bool writer_prepare() {
  HookScope scope(HookDepth::kInternal);
  g_dump.origin().pid = static_cast<std::uint64_t>(getpid());
  g_dump.origin().ppid = static_cast<std::uint64_t>(getppid());
  if (g_options.start_disabled) note_recording_toggle(false, now_ns(), format::Source::kStart);
  if (!prepare_launch()) return false;
  // The dump exists from the start, with its header, even if the writer
  // never starts (a process killed first shows as cut short, not missing),
  // and a directory nobody may write is reported now. Program start: no
  // other thread of the program can be using descriptor numbers yet.
  if (!g_dump.open(g_compressor.scratch())) return false;
  g_dump.close();
  return true;
}

bool writer_launched() { return g_launched.load(std::memory_order_acquire); }

void writer_start_lazily() {
  if (g_launched.load(std::memory_order_acquire) ||
      g_state.load(std::memory_order_relaxed) != RecorderState::kRecording ||
      g_launched.exchange(true, std::memory_order_acq_rel)) {
    return;
  }
  HookScope scope(HookDepth::kInternal);
  if (!start_thread(/*eager=*/true)) g_state.store(RecorderState::kStopped);
}

void wake_writer() {  // the main writer
  g_wake.fetch_add(1, std::memory_order_release);
  os::futex_wake_all(g_wake);
}

void writer_finish(std::uint64_t timeout_ns) {
  if (!g_launched.load(std::memory_order_acquire) && !g_launched.exchange(true, std::memory_order_acq_rel)) {
    finish_without_writer();
    return;
  }
  if (!g_started.load(std::memory_order_acquire)) return;
  g_finish_requested.store(1, std::memory_order_release);
  wake_writer();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  while (g_finish_done.load(std::memory_order_acquire) == 0) {
    const std::uint64_t now = now_ns();
    if (now >= deadline) return;
    os::futex_wait(g_finish_done, 0, deadline - now);
  }
}

void writer_sync_before_exec(const char* path, std::uint64_t timeout_ns) {
  writer_start_lazily();  // the Exec record ends the dump: it needs a writer
  // Two threads exec'ing at once: the second syncs without an Exec record
  // (at most one exec replaces the image; the kernel ends the other thread).
  if (path == nullptr || g_exec_claim.exchange(true, std::memory_order_acquire)) return writer_sync(timeout_ns);
  copy_path(g_exec_request, path);
  g_exec_requested.store(true, std::memory_order_release);
  writer_sync(timeout_ns);
  g_exec_requested.store(false, std::memory_order_relaxed);
  g_exec_claim.store(false, std::memory_order_release);
}

void writer_note_exec_failed(int error, std::uint64_t time_ns) {
  if (!g_started.load(std::memory_order_acquire)) return;
  g_exec_error_ns.store(time_ns, std::memory_order_relaxed);
  g_exec_error.store(error > 0 ? static_cast<std::uint32_t>(error) : EIO, std::memory_order_release);
}

void writer_sync(std::uint64_t timeout_ns) {
  if (!g_started.load(std::memory_order_acquire) || g_finish_done.load() != 0) return;
  const std::uint32_t ticket = g_sync_requested.fetch_add(1, std::memory_order_acq_rel) + 1;
  wake_writer();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  for (;;) {
    const std::uint32_t done = g_sync_done.load(std::memory_order_acquire);
    if (static_cast<std::int32_t>(done - ticket) >= 0 || g_finish_done.load() != 0) return;
    const std::uint64_t now = now_ns();
    if (now >= deadline) return;
    os::futex_wait(g_sync_done, done, deadline - now);
  }
}

std::uint64_t recorded_pid() { return g_dump.origin().pid; }

bool writer_park(std::uint64_t timeout_ns) {
  HookScope scope(HookDepth::kInternal);
  if (!g_started.load(std::memory_order_acquire) || g_finish_done.load(std::memory_order_acquire) != 0) return false;
  g_park_requested.store(1, std::memory_order_release);
  wake_writer();
  const std::uint64_t deadline = now_ns() + timeout_ns;
  while (g_parked.load(std::memory_order_acquire) == 0 && g_finish_done.load(std::memory_order_acquire) == 0) {
    const std::uint64_t now = now_ns();
    if (now >= deadline) return false;  // the writer stays; the program's call fails as it did without parking
    os::futex_wait(g_parked, 0, deadline - now > 1000000 ? 1000000 : deadline - now);
  }
  g_park_requested.store(0, std::memory_order_relaxed);
  if (g_parked.load(std::memory_order_acquire) == 0) return false;  // it finished or failed instead
  g_parked.store(0, std::memory_order_relaxed);
  g_started.store(false, std::memory_order_release);
  pthread_join(g_thread, nullptr);
  // pthread_join returns once the kernel cleared the thread's tid, which it
  // does before it unhashes the task (kernel/exit.c: exit_mm, then
  // exit_notify): until then /proc/self/task still lists it, and a program
  // that counts its threads there (Chromium's zygote) would see two.
  const auto tid = static_cast<long>(g_writer_tid.load(std::memory_order_relaxed));
  for (int i = 0; i < 100000 && syscall(SYS_tgkill, static_cast<long>(getpid()), tid, 0) == 0; ++i) sched_yield();
  // The dump, for the next writer: by path now, while the path still names
  // it (a setns into another mount namespace may change that).
  if (g_dump.opened() && !g_dump.failed()) g_handover_fd.store(g_dump.reopen(/*high=*/true), std::memory_order_release);
  return true;
}

void writer_resume() {
  HookScope scope(HookDepth::kInternal);
  if (g_dump.opened() && !g_dump.failed() && g_handover_fd.load(std::memory_order_relaxed) < 0) {
    log_line({"cannot reopen the dump ", g_dump.path(),
              " after a namespace change; recording stopped, the program goes on"});
    g_state.store(RecorderState::kStopped);
    return;
  }
  if (!start_thread(/*eager=*/false)) g_state.store(RecorderState::kStopped);
  const int left = g_handover_fd.exchange(-1);
  if (left >= 0) guarded_close(left);
}

void writer_restart_in_child() {
  // The parent's file and thread are not ours; its buffers and compression
  // context are ours to reuse (copies of the parent's pages).
  g_dump.reset_after_fork();
  g_compressor.reset_after_fork();
  g_coder.reset_after_fork();
  pool_reset_after_fork();
  g_proc.reset_after_fork();
  g_cycle = Cycle{};
  g_wake.store(0);
  g_finish_requested.store(0);
  g_finish_done.store(0);
  g_sync_requested.store(0);
  g_sync_done.store(0);
  g_exec_claim.store(false);
  g_exec_requested.store(false);
  g_park_requested.store(0);
  g_parked.store(0);
  g_handover_fd.store(-1);
  g_exec_error.store(0);
  g_started.store(false);
  control_forget_after_fork();
  if (!g_enabled.load()) note_recording_toggle(false, now_ns(), format::Source::kStart);
  modules_mark_unwritten();
  // Like the parent at its start, the child gets a writer when it needs one.
  g_launched.store(false);
  g_ticking.store(false);
  g_dump.origin().pid = static_cast<std::uint64_t>(getpid());
  g_dump.origin().ppid = static_cast<std::uint64_t>(getppid());
  if (!prepare_launch()) g_state.store(RecorderState::kStopped);
}

std::uint64_t writer_control_stamp() {
  const std::uint64_t t = unique_stamp();
  // A lone program thread stamps its events with the last tick: a tick taken
  // after the stamp sorts them after it.
  if (g_ticking.load(std::memory_order_relaxed)) publish_tick();
  return stamp_to_ns(t);
}

void writer_put_marker(format::Source source, std::string_view label) {
  const std::uint64_t t = writer_control_stamp();
  g_coder.put_record([&](format::RecordEncoder& enc) { return enc.marker(t, source, label); });
}

std::uint64_t writer_cpu_ns() { return t_writer ? g_cycle.parked_cpu_ns + thread_cpu_ns() : 0; }

const char* writer_dump_path() { return g_dump.path(); }

}  // namespace memrec::preload
