// The recording half of every hook (see recorder.h). Everything here is on
// the hot path but for the [[gnu::cold]] functions it calls.
#include "recorder.h"

#include <cstring>

#include "options.h"
#include "order_stamp.h"
#include "recorder_state.h"
#include "stack_table.h"
#include "thread_buffer.h"
#include "thread_state.h"
#include "unwind.h"

namespace memrec::preload {
namespace {

using format::AllocFn;

// HOT PATH. This thread's ring, mapped on its first event.
inline ThreadBuffer* buffer() {
  ThreadBuffer* b = t_thread.buffer;
  if (b == nullptr) [[unlikely]] {
    b = attach_thread();
    if (b == nullptr) count(format::Counter::kMissedNoBuffer);
  }
  return b;
}

static_assert(kMaxTraceFrames == kMaxDepthLimit + 1 + kUnwindOwnFrames);

// A stack this thread's cache does not know: its frames, interned.
[[gnu::cold, gnu::noinline]] std::uint32_t intern_new_stack(ThreadBuffer& b, const Backtrace& bt, std::uint64_t* ips) {
  if (bt.in_trace) trace_ips(b.unwind, bt.depth, ips);
  return intern_stack(b, bt.hash, std::span<const std::uint64_t>(ips + bt.first, bt.depth), bt.truncated);
}

// HOT PATH. The stack of the current call, interned. A stack this thread met
// before costs the walk and one probe of its cache.
inline std::uint32_t current_stack(ThreadBuffer& b, const StackStart& from) {
  std::uint64_t ips[kMaxTraceFrames];
  const Backtrace bt = capture_backtrace(b.unwind, from, ips, static_cast<std::size_t>(g_options.max_depth));
  if (bt.depth == 0) [[unlikely]] {
    count(format::Counter::kUnwindFailed);
    return 0;
  }
  const StackCacheEntry& c = b.cache[bt.hash & (ThreadBuffer::kCacheEntries - 1)];
  if (c.hash == bt.hash && c.depth == bt.depth) [[likely]]
    return c.id;
  return intern_new_stack(b, bt, ips);
}

inline std::uint64_t addr(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// HOT PATH. Fills and publishes one event of one slot.
template <typename Fill>
inline void emit(ThreadBuffer& b, Fill&& fill) {
  RawEvent* e = reserve(b);
  if (e == nullptr) return;
  fill(*e);
  commit(b);
}

// HOT PATH. Fills and publishes one event of two slots.
template <typename Fill>
inline void emit_with_tail(ThreadBuffer& b, Fill&& fill) {
  RawEvent* e = reserve(b, 2);
  if (e == nullptr) return;
  fill(*e, reserved_tail(b));
  commit(b, 2);
}

}  // namespace

void record_alloc(const StackStart& from, AllocFn fn, const void* p, std::size_t size) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  const std::uint32_t stack = current_stack(*b, from);
  emit(*b, [&](RawEvent& e) {
    e.kind = EventKind::kAlloc;
    e.fn = static_cast<std::uint8_t>(fn);
    e.stack = stack;
    e.addr = addr(p);
    e.size = size;
    e.time_ns = order_stamp();
  });
}

void record_realloc(const StackStart& from, AllocFn fn, std::uint64_t free_ns, const void* old_p, const void* new_p,
                    std::size_t size) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  const std::uint32_t stack = current_stack(*b, from);
  emit_with_tail(*b, [&](RawEvent& e, RawTail& t) {
    e.kind = EventKind::kRealloc;
    e.fn = static_cast<std::uint8_t>(fn);
    e.stack = stack;
    e.time_ns = free_ns;
    t.old_addr = addr(old_p);
    e.addr = addr(new_p);
    e.size = size;
    t.alloc_ns = order_stamp();
  });
}

void record_free(const void* p) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  emit(*b, [&](RawEvent& e) {
    e.kind = EventKind::kFree;
    e.addr = addr(p);
    e.time_ns = order_stamp();
  });
}

void record_free_at(std::uint64_t free_ns, const void* p) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  emit(*b, [&](RawEvent& e) {
    e.kind = EventKind::kFree;
    e.addr = addr(p);
    e.time_ns = free_ns;
  });
}

void record_mmap(const StackStart& from, const void* p, std::size_t size, int prot, int flags) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  const std::uint32_t stack = current_stack(*b, from);
  emit_with_tail(*b, [&](RawEvent& e, RawTail& t) {
    e.kind = EventKind::kMmap;
    e.stack = stack;
    e.addr = addr(p);
    e.size = size;
    t.old_size = static_cast<std::uint64_t>(static_cast<std::uint32_t>(prot)) << 32 | static_cast<std::uint32_t>(flags);
    e.time_ns = order_stamp();
  });
}

void record_munmap(const void* p, std::size_t size) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  emit(*b, [&](RawEvent& e) {
    e.kind = EventKind::kMunmap;
    e.addr = addr(p);
    e.size = size;
    e.time_ns = order_stamp();
  });
}

void record_mremap(const StackStart& from, std::uint64_t free_ns, const void* old_p, std::size_t old_size,
                   const void* new_p, std::size_t new_size) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return;
  const std::uint32_t stack = current_stack(*b, from);
  emit_with_tail(*b, [&](RawEvent& e, RawTail& t) {
    e.kind = EventKind::kMremap;
    e.stack = stack;
    e.time_ns = free_ns;
    t.old_addr = addr(old_p);
    t.old_size = old_size;
    e.addr = addr(new_p);
    e.size = new_size;
    t.alloc_ns = order_stamp();
  });
}

bool record_marker(format::Source source, const char* label, std::size_t bytes) {
  ThreadBuffer* b = buffer();
  if (b == nullptr) return false;
  const std::uint64_t n = 1 + label_slots(bytes);
  RawEvent* e = reserve(*b, n);
  if (e == nullptr) return false;
  e->kind = EventKind::kMarker;
  e->fn = static_cast<std::uint8_t>(source);
  e->stack = 0;
  e->addr = 0;
  e->size = bytes;
  e->time_ns = unique_stamp();
  // The label slot by slot: the ring may wrap between them.
  const std::uint64_t head = b->head.load(std::memory_order_relaxed);
  const std::uint64_t mask = b->mask.load(std::memory_order_relaxed);
  for (std::uint64_t i = 1; i < n; ++i) {
    const std::size_t at = (i - 1) * sizeof(RingSlot);
    const std::size_t chunk = bytes - at < sizeof(RingSlot) ? bytes - at : sizeof(RingSlot);
    std::memcpy(&b->slots[(head + i) & mask], label + at, chunk);
  }
  commit(*b, n);
  return true;
}

}  // namespace memrec::preload
