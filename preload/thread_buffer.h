// One single-producer/single-consumer ring per thread. The owner fills slots
// inside hooks; the writer thread drains them. Rings are mmap()ed, never
// malloc()ed, so creating one cannot re-enter a hook. Buffers form a lock-free
// list that only the writer unlinks from.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "unwind.h"

namespace memrec::preload {

enum class EventKind : std::uint8_t {
  kAlloc,
  kFree,
  kRealloc,
  kMmap,
  kMunmap,
  kMremap,
  kThreadStart,  // name in `name`
  kThreadExit,   // name in `name` (the thread may have renamed itself)
  kMarker,       // memrec_mark(): format::Source in `fn`, the label's length in `size`, its bytes in the slots after
};

// One event as the hook saw it; the writer encodes it (FORMAT.md, "Records").
// A ring slot is 32 bytes, two to a cache line: the writer reads every slot
// the owner wrote, on another core, and those lines moving between the cores
// are much of what memrec costs the program (56-byte slots made bench churn
// 5 % slower). An allocation, a free, a munmap or a thread's start or exit
// takes one slot; a realloc, mmap or mremap a second one, its RawTail.
struct RawEvent {
  EventKind kind;
  std::uint8_t fn;  // format::AllocFn for allocations
  std::uint16_t unused;
  std::uint32_t stack;
  std::uint64_t time_ns;  // the order stamp; for Realloc/Mremap, when the old block was released
  std::uint64_t addr;     // the new block
  std::uint64_t size;     // its size
};
static_assert(sizeof(RawEvent) == 32);

// The slot after a Realloc, Mmap or Mremap event.
struct RawTail {
  std::uint64_t old_addr;  // Realloc/Mremap: the old block
  std::uint64_t old_size;  // Mremap: the old size; Mmap: prot << 32 | flags
  std::uint64_t alloc_ns;  // Realloc/Mremap: when the new block was obtained
  std::uint64_t unused;
};
static_assert(sizeof(RawTail) == 32);

union RingSlot {
  RawEvent event;
  RawTail tail;
};

// How many ring slots an event of `kind` takes.
constexpr std::uint64_t slots_of(EventKind kind) {
  return kind == EventKind::kRealloc || kind == EventKind::kMmap || kind == EventKind::kMremap ? 2 : 1;
}

// The slots a marker's label of `bytes` takes after its event's slot.
constexpr std::uint64_t label_slots(std::uint64_t bytes) { return (bytes + sizeof(RingSlot) - 1) / sizeof(RingSlot); }

// How many ring slots the event `e` takes, its label's included.
constexpr std::uint64_t slots_of(const RawEvent& e) {
  return e.kind == EventKind::kMarker ? 1 + label_slots(e.size) : slots_of(e.kind);
}

// A per-thread cache of stack hashes already interned, so a repeated stack
// costs one hash and one load, not a probe of the shared table.
struct StackCacheEntry {
  std::uint64_t hash;
  std::uint32_t id;
  std::uint32_t depth;
};

// Mapped whole, but the ring's pages are touched only as far as the thread
// uses it: attach_thread() runs no initialiser over the arrays (fresh mmap()ed
// pages are zero), and the ring starts at kFirstSlots and doubles, up to
// kSlots, each time it fills, so a thread that records little costs a few
// pages, not the whole buffer (docs/design/thread_memory.md).
struct ThreadBuffer {
  static constexpr std::uint64_t kSlots = 8192;  // the most a ring holds; a power of two
  static constexpr std::uint64_t kFirstSlots = 512;
  static constexpr std::uint64_t kCacheEntries = 1024;
  // Before the process's writer started, a ring this full starts it
  // (writer_start_lazily): a process that records hardly anything, such as
  // a launcher or Chromium's zygote, keeps a single thread.
  static constexpr std::uint64_t kLazyStartSlots = 32;

  // Written by the owner only.
  alignas(64) std::atomic<std::uint64_t> head{0};
  std::uint64_t cached_tail = 0;  // the owner's last look at `tail`
  // The ring's size less one. The owner changes it only while the ring is
  // empty (wait_for_space), before its next release store of `head`, with
  // which the writer's acquire load of `head` pairs: the writer reads it after
  // that load, so it always has the size the slots it drains were written with.
  std::atomic<std::uint64_t> mask{kFirstSlots - 1};
  // Slots in use past which reserve() takes the cold path: the ring's size,
  // or less while the process has no writer yet (kLazyStartSlots). Owner only.
  std::uint64_t limit = kFirstSlots;
  // Written by the writer thread only.
  alignas(64) std::atomic<std::uint64_t> tail{0};
  // Set once, before the buffer is published on the list.
  alignas(64) std::uint64_t tid = 0;
  std::uint32_t writer = 0;  // the list it is on: g_buffers[writer]
  std::size_t mapped_bytes = 0;
  std::atomic<ThreadBuffer*> next{nullptr};
  // Set by the owner when its TLS is torn down; the writer frees the buffer
  // once the kernel says the thread is gone and the ring is empty.
  std::atomic<bool> exited{false};
  // Writer-only bookkeeping.
  std::uint64_t drain_to = 0;  // the head noted at the start of a cycle
  char last_name[16] = {};
  bool name_known = false;

  StackCacheEntry cache[kCacheEntries];  // zero as mapped: not initialised, so untouched pages cost nothing
  UnwindCache unwind;
  RingSlot slots[kSlots];
};

// The most writer threads a process has (writer_pool.h), and so the most
// lists of buffers: one per writer, each drained by one writer at a time.
inline constexpr std::uint32_t kMaxWriters = 8;
// The lists of live buffers, newest first.
extern std::atomic<ThreadBuffer*> g_buffers[kMaxWriters];
// How many lists attach_thread() deals new threads to, in turn (1 until the
// constructor sets it: a thread that records before it goes to list 0).
extern std::atomic<std::uint32_t> g_buffer_lists;

// Maps and publishes the calling thread's buffer and writes its ThreadStart.
// Returns null (and remembers it) if mmap fails.
[[gnu::cold, gnu::noinline]] ThreadBuffer* attach_thread();

// Starts the writer if the process has none yet (the ring passed its
// `limit`); then waits for the writer to free `n` slots (backpressure), or
// drops the event in lossy mode. A ring smaller than kSlots waits until it is
// empty and doubles. Returns null if the event cannot be recorded.
[[gnu::cold, gnu::noinline]] RawEvent* wait_for_space(ThreadBuffer& buf, std::uint64_t n);

// HOT PATH. The first of `n` slots (slots_of) to fill, or null when the
// event is lost (counted).
inline RawEvent* reserve(ThreadBuffer& buf, std::uint64_t n = 1) {
  const std::uint64_t h = buf.head.load(std::memory_order_relaxed);
  if (h + n - buf.cached_tail > buf.limit) [[unlikely]] {
    // Pairs with the writer's release store of `tail` after it consumed slots.
    buf.cached_tail = buf.tail.load(std::memory_order_acquire);
    if (h + n - buf.cached_tail > buf.limit) return wait_for_space(buf, n);
  }
  return &buf.slots[h & buf.mask.load(std::memory_order_relaxed)].event;  // ours: no ordering needed
}

// HOT PATH. The second slot of a two-slot event being filled.
inline RawTail& reserved_tail(ThreadBuffer& buf) {
  return buf.slots[(buf.head.load(std::memory_order_relaxed) + 1) & buf.mask.load(std::memory_order_relaxed)].tail;
}

// HOT PATH. Publishes the `n` slots filled since the last reserve; the
// release pairs with the writer's acquire load of `head`.
inline void commit(ThreadBuffer& buf, std::uint64_t n = 1) {
  buf.head.store(buf.head.load(std::memory_order_relaxed) + n, std::memory_order_release);
}

// Creates the pthread key whose destructor calls mark_thread_exit().
void thread_exit_init();
// Called when the thread's TLS is torn down (pthread key destructor).
void mark_thread_exit(ThreadBuffer& buf);

// In a fork child: keep only the calling thread's buffer, emptied, on list 0.
void reset_buffers_after_fork();

// Unmaps a buffer that is no longer on the list.
void unmap_buffer(ThreadBuffer* buf);
// Writer side: unmaps the buffer of a thread that is gone and stops counting it.
void retire_buffer(ThreadBuffer* buf);

}  // namespace memrec::preload
