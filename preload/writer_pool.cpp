// The pool of writers (see writer_pool.h). A pool writer's cycle: drain each
// ring of its list up to the head it reads, retire the threads gone, compress
// a chunk, end a frame due; sleep as the main writer does. It writes no
// definition: the stacks its events use are defined in the main writer's
// frames, and its frame is placed after the one defining the last of them.
#include "writer_pool.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>

#include "clock.h"
#include "dump_file.h"
#include "fd_guard.h"
#include "frame_compressor.h"
#include "log.h"
#include "options.h"
#include "os.h"
#include "proc_sampler.h"
#include "stack_table.h"
#include "thread_buffer.h"
#include "thread_state.h"
#include "writer.h"

namespace memrec::preload {
namespace {

// Pool writer w's state; slot 0 is unused (the main writer is writer.cpp's).
// `running` is the main writer's own record (only it starts and joins them);
// the words below pair with the pool writer's loads and stores as noted.
struct Slot {
  EventCoder coder;
  FrameCompressor compressor;
  std::atomic<std::uint32_t> wake{0};  // bumped to wake it (release; its acquire load pairs)
  std::atomic<std::uint32_t> stop{0};  // set by the main writer (release; its acquire pairs)
  std::atomic<std::uint32_t> done{0};  // set when its last frame is written (release; the main writer's acquire pairs)
  std::atomic<bool> running{false};    // read by wake_writer() on any thread: relaxed, a hint
  pthread_t thread{};
  std::uint64_t tid = 0;
  std::uint64_t past_cpu_ns = 0;  // CPU time of its earlier threads (stopped before a sync or park)
  std::uint64_t noted_ns = 0;     // when its last cycle began
  std::uint64_t gap_ns = 0;       // the time between its last two cycles
  std::uint64_t names_ns = 0;     // when it last looked for renamed threads
  bool ready = false;             // its buffers are set up
  bool private_fds = false;       // the main writer's table, which it shares, is not the program's
};
constinit Slot g_slots[kMaxWriters];

// The stacks placed (every id below it is defined in a frame written whole)
// and the most a pool writer waits for; both raised only.
std::atomic<std::uint32_t> g_stacks_placed{0};
std::atomic<std::uint32_t> g_stacks_wanted{0};

// The pool writer this thread is (0: none, or the main writer).
constinit thread_local std::uint32_t t_pool_writer = 0;

void raise(std::atomic<std::uint32_t>& word, std::uint32_t v) {
  std::uint32_t cur = word.load(std::memory_order_relaxed);
  while (cur < v && !word.compare_exchange_weak(cur, v, std::memory_order_acq_rel)) {
  }
}

// As the main writer's sleep (writer.cpp, sleep_ns): awake while a ring was a
// quarter full; otherwise back by the time the fastest one is a quarter
// full again, at most 5 ms while quiet, and by the frame's flush interval.
std::uint64_t pool_sleep_ns(const Slot& s, std::uint64_t now) {
  const EventCoder::CycleDrains& drains = s.coder.drains();
  if (drains.busy || s.compressor.compressing()) return 0;
  std::uint64_t wait = 5000000;
  if (drains.drained) {
    const std::uint64_t per_event = s.gap_ns / (drains.most_drained != 0 ? drains.most_drained : 1);
    wait = std::min<std::uint64_t>(per_event * (ThreadBuffer::kSlots / 4), 300000);
  }
  const std::uint64_t flush_at = s.coder.last_flush_ns() + g_options.flush_interval_ms * 1000000ull;
  if (flush_at > now && flush_at - now < wait) wait = flush_at - now;
  return std::max<std::uint64_t>(wait, 20000);
}

void pool_cycle(Slot& s, std::uint32_t w) {
  const std::uint64_t now = now_ns();
  s.gap_ns = now - s.noted_ns;
  s.noted_ns = now;
  const bool poll = now - s.names_ns >= 1000000000ull;
  if (poll) s.names_ns = now;
  s.coder.begin_cycle();
  for (ThreadBuffer* b = g_buffers[w].load(std::memory_order_acquire); b != nullptr;
       b = b->next.load(std::memory_order_acquire)) {
    // Pairs with commit()'s release store: events up to here are complete.
    s.coder.drain(*b, b->head.load(std::memory_order_acquire));
    if (poll) s.coder.poll_name(*b);
  }
  retire_threads(s.coder, w, g_dump.origin().pid);
  s.compressor.step();
  const std::uint64_t last_flush_ns = s.coder.last_flush_ns();
  if (!s.coder.frame_empty() && now > last_flush_ns &&
      now - last_flush_ns >= g_options.flush_interval_ms * 1000000ull) {
    s.coder.flush_frame(false);
  }
}

void* pool_main(void* arg) {
  t_thread.depth = HookDepth::kInternal;  // for life: nothing this thread does is recorded
  const auto w = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(arg));
  t_pool_writer = w;
  Slot& s = g_slots[w];
  // Every signal stays blocked (the main writer's mask, inherited); its
  // descriptors are the main writer's table, shared (fd_guard.h).
  share_private_descriptors(s.private_fds);
  char name[16] = "memrec-writer-";
  name[14] = static_cast<char>('0' + w);
  prctl(PR_SET_NAME, name, 0, 0, 0);
  prctl(PR_SET_TIMERSLACK, 5000, 0, 0, 0);
  s.tid = os::gettid();
  s.noted_ns = now_ns();
  for (;;) {
    const std::uint32_t seq = s.wake.load(std::memory_order_acquire);
    const bool stop = s.stop.load(std::memory_order_acquire) != 0;
    // A stop asked before this cycle began drains everything committed before it.
    if (!g_dump.failed()) pool_cycle(s, w);
    if (stop) {
      if (!g_dump.failed()) s.coder.flush_frame(false, /*complete=*/true);
      s.past_cpu_ns += thread_cpu_ns();
      s.done.store(1, std::memory_order_release);
      os::futex_wake_all(s.done);
      return nullptr;  // joined by pool_stop_all()
    }
    const std::uint64_t wait = g_dump.failed() ? 5000000 : pool_sleep_ns(s, now_ns());
    if (wait == 0) {
      sched_yield();
    } else {
      os::futex_wait(s.wake, seq, wait);
    }
  }
}

std::uint32_t auto_writers() {
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  const long n = cpus > 1 ? cpus - 1 : 1;
  return static_cast<std::uint32_t>(std::clamp<long>(n, 4, kMaxWriters));
}

}  // namespace

void pool_configure() {
  const std::uint32_t lists = g_options.writers != 0 ? g_options.writers : auto_writers();
  for (std::uint32_t w = 1; w < kMaxWriters; ++w) g_slots[w].coder.bind(w, g_slots[w].compressor);
  g_buffer_lists.store(std::min(lists, kMaxWriters), std::memory_order_relaxed);
}

bool pool_runs(std::uint32_t w) { return w != 0 && g_slots[w].running.load(std::memory_order_relaxed); }

std::uint32_t pool_running() {
  std::uint32_t n = 0;
  for (std::uint32_t w = 1; w < kMaxWriters; ++w) n += pool_runs(w) ? 1 : 0;
  return n;
}

void pool_start_needed(void (*handover)()) {
  const std::uint32_t lists = g_buffer_lists.load(std::memory_order_relaxed);
  bool handed = false;
  for (std::uint32_t w = 1; w < lists; ++w) {
    Slot& s = g_slots[w];
    if (s.running.load(std::memory_order_relaxed) || g_buffers[w].load(std::memory_order_acquire) == nullptr) continue;
    if (!s.ready) {
      // Once per process (a fork child keeps them): the same buffers as the main writer's.
      if (!s.compressor.setup() || !s.coder.setup()) continue;  // the main writer keeps draining that list
      s.coder.start(now_ns());
      s.ready = true;
    }
    if (!handed) {
      handover();
      handed = true;
    }
    s.stop.store(0, std::memory_order_relaxed);
    s.done.store(0, std::memory_order_relaxed);
    s.running.store(true, std::memory_order_relaxed);
    s.private_fds = has_private_descriptors();
    const int err = pthread_create(&s.thread, nullptr, pool_main, reinterpret_cast<void*>(std::uintptr_t{w}));
    if (err != 0) {
      s.running.store(false, std::memory_order_relaxed);
      log_line({"cannot start a pool writer: ", errno_text(err), "; the main writer codes its threads' events"});
    }
  }
}

void pool_stop_all(void (*serve)()) {
  for (std::uint32_t w = 1; w < kMaxWriters; ++w) {
    Slot& s = g_slots[w];
    if (!s.running.load(std::memory_order_relaxed)) continue;
    s.stop.store(1, std::memory_order_release);
    s.wake.fetch_add(1, std::memory_order_release);
    os::futex_wake_all(s.wake);
  }
  for (std::uint32_t w = 1; w < kMaxWriters; ++w) {
    Slot& s = g_slots[w];
    if (!s.running.load(std::memory_order_relaxed)) continue;
    while (s.done.load(std::memory_order_acquire) == 0) {
      serve();
      os::futex_wait(s.done, 0, 1000000);
    }
    pthread_join(s.thread, nullptr);
    // The kernel lists a joined thread a little longer (writer_park() says why it matters).
    const auto tid = static_cast<long>(s.tid);
    for (int i = 0; i < 100000 && syscall(SYS_tgkill, static_cast<long>(getpid()), tid, 0) == 0; ++i) sched_yield();
    s.running.store(false, std::memory_order_relaxed);
  }
}

void wake_writer(std::uint32_t w) {
  if (w == 0 || w >= kMaxWriters || !g_slots[w].running.load(std::memory_order_relaxed)) {
    wake_writer();
    return;
  }
  Slot& s = g_slots[w];
  s.wake.fetch_add(1, std::memory_order_release);
  os::futex_wake_all(s.wake);
}

void await_stacks_placed(std::uint32_t end) {
  // No wait for an id never handed out (nothing would ever define it).
  end = std::min(end, stack_id_end());
  // Acquire pairs with note_stacks_placed()'s release: nothing to order by
  // it but the decision to place the frame now.
  std::uint32_t placed = g_stacks_placed.load(std::memory_order_acquire);
  if (placed >= end) return;
  raise(g_stacks_wanted, end);
  // Bounded: a reader resolves stacks once it read every frame, so a frame
  // placed early still reads whole; only a dump cut between the two would
  // miss the definitions.
  const std::uint64_t deadline = now_ns() + 1000000000ull;
  while ((placed = g_stacks_placed.load(std::memory_order_acquire)) < end && !g_dump.failed() && now_ns() < deadline) {
    wake_writer();
    os::futex_wait(g_stacks_placed, placed, 1000000);
  }
}

void note_stacks_placed(std::uint32_t end) {
  raise(g_stacks_placed, end);
  if (g_stacks_wanted.load(std::memory_order_relaxed) != 0) os::futex_wake_all(g_stacks_placed);
}

bool stacks_wanted() {
  return g_stacks_wanted.load(std::memory_order_acquire) > g_stacks_placed.load(std::memory_order_acquire);
}

std::uint64_t recorder_cpu_ns(std::uint32_t w) {
  if (w == 0) return writer_cpu_ns();
  return t_pool_writer == w ? g_slots[w].past_cpu_ns + thread_cpu_ns() : 0;
}

void retire_threads(EventCoder& coder, std::uint32_t list, std::uint64_t pid) {
  ThreadBuffer* prev = nullptr;
  ThreadBuffer* b = g_buffers[list].load(std::memory_order_acquire);
  while (b != nullptr) {
    ThreadBuffer* next = b->next.load(std::memory_order_relaxed);
    const bool done = b->exited.load(std::memory_order_acquire) && thread_gone(pid, b->tid);
    if (done) {
      coder.drain(*b, b->head.load(std::memory_order_acquire));
      bool unlinked = true;
      if (prev != nullptr) {
        prev->next.store(next, std::memory_order_relaxed);
      } else {
        ThreadBuffer* expected = b;
        // A new thread may have pushed itself in front meanwhile: try next cycle.
        unlinked = g_buffers[list].compare_exchange_strong(expected, next, std::memory_order_acq_rel);
      }
      if (unlinked) {
        retire_buffer(b);
        b = next;
        continue;
      }
    }
    prev = b;
    b = next;
  }
}

void pool_reset_after_fork() {
  for (std::uint32_t w = 1; w < kMaxWriters; ++w) {
    Slot& s = g_slots[w];
    s.coder.reset_after_fork();
    s.compressor.reset_after_fork();
    s.wake.store(0);
    s.stop.store(0);
    s.done.store(0);
    s.running.store(false);
    s.tid = 0;
    s.past_cpu_ns = 0;
    s.ready = false;  // setup() again: the same memory, a new encoder over it
  }
  g_stacks_placed.store(0);
  g_stacks_wanted.store(0);
}

}  // namespace memrec::preload
