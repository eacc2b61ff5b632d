// Cold paths of the per-thread rings: mapping a thread's buffer on its first
// event, waiting for the writer when the ring is full, and thread exit.
#include "thread_buffer.h"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>

#include "clock.h"
#include "options.h"
#include "order_stamp.h"
#include "os.h"
#include "recorder_state.h"
#include "thread_state.h"
#include "writer.h"

namespace memrec::preload {

std::atomic<ThreadBuffer*> g_buffers[kMaxWriters] = {};
std::atomic<std::uint32_t> g_buffer_lists{1};
// Each on a cache line of its own: every event reads g_recording_threads and
// g_tick_ns, and while two or more threads record, writes g_stamp. Sharing
// its line, the reads missed the cache at every event too.
alignas(64) std::atomic<std::uint32_t> g_recording_threads{0};
alignas(64) std::atomic<std::uint64_t> g_tick_ns{0};
alignas(64) std::atomic<bool> g_ticking{false};
alignas(64) std::atomic<std::uint64_t> g_stamp{0};

namespace {

// Slots the live rings hold beyond kFirstSlots each. A ring grows only while
// this stays within kGrowthSlots: a thread that allocates fast gets the room
// that lets the writer sleep between its visits, but thousands of them at once
// share 32 MiB instead of taking 256 KiB each. Relaxed: a budget, which
// threads growing at the same moment may overshoot by a ring each.
constexpr std::uint64_t kGrowthSlots = (std::uint64_t{32} << 20) / sizeof(RingSlot);
std::atomic<std::uint64_t> g_grown_slots{0};

// Takes `slots` more from the budget, to double a ring of that size.
bool take_growth(std::uint64_t slots) {
  if (g_grown_slots.fetch_add(slots, std::memory_order_relaxed) + slots <= kGrowthSlots) return true;
  g_grown_slots.fetch_sub(slots, std::memory_order_relaxed);
  return false;
}

pthread_key_t g_exit_key;
bool g_exit_key_ok = false;

void on_thread_exit(void* buf) {
  if (buf != nullptr) mark_thread_exit(*static_cast<ThreadBuffer*>(buf));
}

// Arranges for mark_thread_exit() when the calling thread ends.
void register_thread_exit(ThreadBuffer* buf) {
  if (!g_exit_key_ok) return;
  HookScope scope(HookDepth::kInternal);  // pthread_setspecific may calloc for high keys
  pthread_setspecific(g_exit_key, buf);
}

void put_name(RawEvent& e) {
  char name[16] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  static_assert(sizeof(name) == sizeof(e.addr) + sizeof(e.size));
  __builtin_memcpy(&e.addr, name, sizeof(name));
}

// Makes the thread's ThreadStart the only event in its ring.
void start_ring(ThreadBuffer& buf) {
  RawEvent& e = buf.slots[0].event;
  e = RawEvent{};
  e.kind = EventKind::kThreadStart;
  e.time_ns = order_stamp();
  put_name(e);
  buf.head.store(1, std::memory_order_relaxed);
}

// Threads in the order they attached, to deal them to the lists in turn.
std::atomic<std::uint32_t> g_attached{0};

void push(ThreadBuffer* buf) {
  const std::uint32_t lists = g_buffer_lists.load(std::memory_order_relaxed);
  // Counted before the lists are known too: the first thread, list 0's, is
  // then the first dealt (usually the main thread, whose main writer also
  // has the definitions to write).
  buf->writer = g_attached.fetch_add(1, std::memory_order_relaxed) % lists;
  std::atomic<ThreadBuffer*>& list = g_buffers[buf->writer];
  ThreadBuffer* head = list.load(std::memory_order_relaxed);
  do {
    buf->next.store(head, std::memory_order_relaxed);
    // Release: the writer that finds `buf` sees it fully initialised.
  } while (!list.compare_exchange_weak(head, buf, std::memory_order_release, std::memory_order_relaxed));
}

}  // namespace

void thread_exit_init() { g_exit_key_ok = pthread_key_create(&g_exit_key, on_thread_exit) == 0; }

ThreadBuffer* attach_thread() {
  if (t_thread.attach_failed) return nullptr;
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t bytes = (sizeof(ThreadBuffer) + page - 1) & ~(page - 1);
  void* mem = os::map(bytes);
  if (mem == nullptr) {
    t_thread.attach_failed = true;
    return nullptr;
  }
  // Before this thread's first stamp: from now on every thread reads the clock
  // if this is the second (order_stamp.h).
  g_recording_threads.fetch_add(1, std::memory_order_seq_cst);
  // Default-initialised, not value-initialised (`ThreadBuffer()`), which
  // zeroed the whole buffer and so made every page of it resident.
  auto* buf = new (mem) ThreadBuffer;
  // Lossy mode drops what does not fit instead of waiting, so its ring never
  // gets the empty moment it would grow in: it starts at full size.
  if (g_options.lossy) buf->mask.store(ThreadBuffer::kSlots - 1, std::memory_order_relaxed);
  const std::uint64_t size = buf->mask.load(std::memory_order_relaxed) + 1;
  buf->limit = writer_launched() ? size : std::min(size, ThreadBuffer::kLazyStartSlots);
  buf->tid = os::gettid();
  buf->mapped_bytes = bytes;
  start_ring(*buf);
  t_thread.buffer = buf;
  register_thread_exit(buf);
  count(format::Counter::kThreads);
  push(buf);
  // A second thread: the program can no longer need to be alone (and nobody
  // would tick for the two).
  if (g_recording_threads.load(std::memory_order_relaxed) >= 2) writer_start_lazily();
  return buf;
}

RawEvent* wait_for_space(ThreadBuffer& buf, std::uint64_t n) {
  const std::uint64_t h = buf.head.load(std::memory_order_relaxed);
  std::uint64_t size = buf.mask.load(std::memory_order_relaxed) + 1;
  if (buf.limit < size) {
    writer_start_lazily();
    // Not started yet (before our constructor): look again a little later.
    const std::uint64_t used = h + n - buf.cached_tail;
    // A ring no writer has drained yet (the libraries' constructors that run
    // before ours allocate thousands of blocks) grows at once: its events sit
    // at positions [0, h) within the old size, which the larger mask indexes
    // the same way, so even a writer starting now reads them right.
    while (used > size && h <= size && buf.tail.load(std::memory_order_acquire) == 0 && size < ThreadBuffer::kSlots &&
           take_growth(size)) {
      size *= 2;
      buf.mask.store(size - 1, std::memory_order_relaxed);
    }
    // Below the ring's size while no writer runs, so the next event looks again.
    buf.limit = writer_launched() ? size : std::min(size - 1, used + ThreadBuffer::kLazyStartSlots);
    if (used <= size) return &buf.slots[h & (size - 1)].event;
  }
  if (g_options.lossy) {
    count(format::Counter::kDroppedLossy);
    return nullptr;
  }
  count(format::Counter::kBackpressureWaits);
  // A ring below its full size grows once the writer has emptied it: then
  // no slot is in flight, so the writer's next drain reads the new size.
  const std::uint64_t slots = buf.mask.load(std::memory_order_relaxed) + 1;
  const bool grow = slots < ThreadBuffer::kSlots && take_growth(slots);
  const std::uint64_t start = now_ns();
  for (int spins = 0;; ++spins) {
    if (g_state.load(std::memory_order_relaxed) != RecorderState::kRecording) {
      // Nobody drains an early or stopped recorder: the event is lost, counted.
      count(g_state.load(std::memory_order_relaxed) == RecorderState::kStopped ? format::Counter::kMissedStopped
                                                                               : format::Counter::kDroppedLossy);
      count(format::Counter::kBackpressureWaitNs, now_ns() - start);
      if (grow) g_grown_slots.fetch_sub(slots, std::memory_order_relaxed);
      return nullptr;
    }
    wake_writer(buf.writer);
    if (spins < 16) {
      sched_yield();
    } else {
      const timespec pause{0, 50000};
      nanosleep(&pause, nullptr);
    }
    buf.cached_tail = buf.tail.load(std::memory_order_acquire);
    if (grow ? buf.cached_tail == h : h + n - buf.cached_tail <= slots) break;
  }
  count(format::Counter::kBackpressureWaitNs, now_ns() - start);
  // Published with this event's release store of `head` (thread_buffer.h).
  if (grow) {
    buf.mask.store(2 * slots - 1, std::memory_order_relaxed);
    buf.limit = 2 * slots;
  }
  return &buf.slots[h & buf.mask.load(std::memory_order_relaxed)].event;
}

void mark_thread_exit(ThreadBuffer& buf) {
  HookScope scope(HookDepth::kInternal);
  // The exit event goes through the ring like any other, so it is ordered
  // with this thread's events; frees by later TLS destructors may follow it.
  if (RawEvent* e = reserve(buf)) {
    *e = RawEvent{};
    e->kind = EventKind::kThreadExit;
    e->time_ns = order_stamp();
    put_name(*e);
    commit(buf);
  }
  buf.exited.store(true, std::memory_order_release);
}

void reset_buffers_after_fork() {
  ThreadBuffer* self = t_thread.buffer;
  for (std::atomic<ThreadBuffer*>& list : g_buffers) {
    ThreadBuffer* b = list.load(std::memory_order_relaxed);
    while (b != nullptr) {
      ThreadBuffer* next = b->next.load(std::memory_order_relaxed);
      if (b != self) unmap_buffer(b);
      b = next;
    }
    list.store(nullptr, std::memory_order_relaxed);
  }
  g_attached.store(1, std::memory_order_relaxed);  // the child's own thread is the first dealt
  g_recording_threads.store(self != nullptr ? 1 : 0, std::memory_order_relaxed);
  g_grown_slots.store(self != nullptr ? self->mask.load(std::memory_order_relaxed) + 1 - ThreadBuffer::kFirstSlots : 0,
                      std::memory_order_relaxed);
  reset_stamps();
  t_thread.last_stamp = 0;
  if (self != nullptr) {
    // The ring holds the parent's undrained events, which the parent writes;
    // the child starts empty, with its own tid and a fresh stack cache (stack
    // ids are per process).
    self->tail.store(0, std::memory_order_relaxed);
    self->cached_tail = 0;
    self->limit = ThreadBuffer::kLazyStartSlots;  // the child starts without a writer
    self->tid = os::gettid();
    self->name_known = false;
    for (StackCacheEntry& c : self->cache) c = StackCacheEntry{};
    start_ring(*self);
    self->next.store(nullptr, std::memory_order_relaxed);
    self->writer = 0;
    g_buffers[0].store(self, std::memory_order_release);
  }
}

void unmap_buffer(ThreadBuffer* buf) { os::unmap(buf, buf->mapped_bytes); }

void retire_buffer(ThreadBuffer* buf) {
  const std::uint64_t slots = buf->mask.load(std::memory_order_relaxed) + 1;
  if (slots > ThreadBuffer::kFirstSlots)
    g_grown_slots.fetch_sub(slots - ThreadBuffer::kFirstSlots, std::memory_order_relaxed);
  unmap_buffer(buf);
  // A fresh tick first: see order_stamp.h.
  publish_tick();
  g_recording_threads.fetch_sub(1, std::memory_order_release);
}

}  // namespace memrec::preload
