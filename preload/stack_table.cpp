// The shared stack tables (see stack_table.h). Tables grow by chaining: when
// the newest is half full a table twice its size is added, new stacks go into
// the newest, and lookups probe every table newest first. Growing this way
// needs no lock; the rare cost is that two threads meeting a new stack while a
// table is added may give it two ids (FORMAT.md allows it).
//
// Memory: a slot is one word, 40 bits of the stack's hash and its 24-bit id,
// and a stack is known by its 64-bit hash alone (the frames are not compared:
// with a million stacks, two share a hash with odds of about 1 in 30 million).
// The frames themselves are kept only until the writer has written them, in
// two rings (entries by id, frames by offset) that a new stack waits on when
// the writer is behind. So a program with 170,000 distinct stacks of 60 frames
// (cc1plus) costs a few MiB of tables, not the 80 MiB its frames would take.
#include "stack_table.h"

#include <sched.h>
#include <cstring>
#include <ctime>

#include "module_registry.h"
#include "os.h"
#include "recorder_state.h"
#include "thread_buffer.h"
#include "writer.h"

namespace memrec::preload {
namespace {

constexpr std::uint32_t kMaxStacks = 1u << 24;    // ids fit in a slot's low 24 bits
constexpr std::uint32_t kEntryRing = 1u << 14;    // stacks defined but not yet written
constexpr std::uint64_t kFrameRing = 1ull << 18;  // their frames (2 MiB)
constexpr int kFirstTableBits = 12;
constexpr int kMaxTables = 16;
constexpr int kOffsetBits = 40;  // g_reserved: id << 40 | frame offset

struct Table {
  std::uint64_t mask;
  std::size_t mapped_bytes;
  std::atomic<std::uint64_t> used;
  std::atomic<std::uint64_t> slots[1];  // `mask + 1` slots: tag << 24 | id, 0 = empty
};

struct Entry {
  std::atomic<std::uint32_t> ready;  // the id whose fields below are written
  std::uint32_t depth;
  std::uint64_t module_gen;
  std::uint64_t offset;  // into the frame ring, not yet reduced
  std::uint8_t truncated;
};

std::atomic<Table*> g_tables[kMaxTables];
std::atomic<int> g_table_count{0};
Entry* g_entries = nullptr;
std::uint64_t* g_frames = nullptr;
// The next id and frame offset, reserved together so both grow in id order.
std::atomic<std::uint64_t> g_reserved{std::uint64_t{1} << kOffsetBits};
// Writer side: every id below g_written_id is written, and every frame below
// g_frames_freed is free again.
std::atomic<std::uint32_t> g_written_id{1};
std::atomic<std::uint64_t> g_frames_freed{0};

std::uint64_t slot_word(std::uint64_t hash, std::uint32_t id) { return (hash & ~0xffffffull) | id; }
bool slot_matches(std::uint64_t word, std::uint64_t hash) { return (word & ~0xffffffull) == (hash & ~0xffffffull); }
std::uint32_t slot_id(std::uint64_t word) { return static_cast<std::uint32_t>(word & 0xffffff); }

Table* make_table(int bits) {
  const std::uint64_t slots = 1ull << bits;
  const std::size_t bytes = sizeof(Table) + (slots - 1) * sizeof(std::uint64_t);
  auto* t = static_cast<Table*>(os::map(bytes, /*noreserve=*/true));
  if (t == nullptr) return nullptr;
  t->mask = slots - 1;
  t->mapped_bytes = bytes;
  return t;
}

// Adds a table twice the size of table `n - 1`, unless another thread did.
void grow(int n) {
  if (n >= kMaxTables) return;
  Table* t = make_table(kFirstTableBits + n);
  if (t == nullptr) return;
  Table* expected = nullptr;
  if (!g_tables[n].compare_exchange_strong(expected, t, std::memory_order_acq_rel)) {
    os::unmap(t, t->mapped_bytes);
    return;
  }
  int count = n;
  g_table_count.compare_exchange_strong(count, n + 1, std::memory_order_release);
}

Entry& entry(std::uint32_t id) { return g_entries[id % kEntryRing]; }

// The slot's index is the hash's low bits, so with the 40-bit tag most of the
// 64 bits are compared.
std::uint32_t find_in(const Table& t, std::uint64_t hash) {
  for (std::uint64_t i = hash & t.mask;; i = (i + 1) & t.mask) {
    const std::uint64_t w = t.slots[i].load(std::memory_order_acquire);
    if (w == 0) return 0;
    if (slot_matches(w, hash)) return slot_id(w);
  }
}

// Whether the rings have room for one more stack of `depth` frames starting
// at the packed reservation `r`; sets the reservation to take.
bool room_for(std::uint64_t r, std::size_t depth, std::uint64_t& next) {
  const auto id = static_cast<std::uint32_t>(r >> kOffsetBits);
  std::uint64_t offset = r & ((std::uint64_t{1} << kOffsetBits) - 1);
  // A stack never wraps around the ring's end: skip to its start instead.
  if (offset % kFrameRing + depth > kFrameRing) offset += kFrameRing - offset % kFrameRing;
  if (id - g_written_id.load(std::memory_order_acquire) >= kEntryRing) return false;
  if (offset + depth - g_frames_freed.load(std::memory_order_acquire) > kFrameRing) return false;
  next = (static_cast<std::uint64_t>(id) << kOffsetBits) | offset;
  return true;
}

// Reserves an id and room for the frames, waiting for the writer while the
// rings are full (as a full event ring does); 0 if it cannot.
std::uint32_t reserve(std::size_t depth, std::uint64_t& offset) {
  if (depth > kFrameRing) return 0;
  std::uint64_t r = g_reserved.load(std::memory_order_relaxed);
  for (int spins = 0;;) {
    std::uint64_t at;
    if (room_for(r, depth, at)) {
      const std::uint64_t next = at + (std::uint64_t{1} << kOffsetBits) + depth;
      if (g_reserved.compare_exchange_weak(r, next, std::memory_order_relaxed)) {
        offset = at & ((std::uint64_t{1} << kOffsetBits) - 1);
        return static_cast<std::uint32_t>(at >> kOffsetBits);
      }
      continue;
    }
    // Nobody drains an early or stopped recorder.
    if (g_state.load(std::memory_order_relaxed) != RecorderState::kRecording) return 0;
    wake_writer();
    if (++spins < 16) {
      sched_yield();
    } else {
      const timespec pause{0, 50000};
      nanosleep(&pause, nullptr);
    }
    r = g_reserved.load(std::memory_order_relaxed);
  }
}

// Copies the frames into the rings and publishes a new id, or returns 0.
std::uint32_t create_entry(std::span<const std::uint64_t> ips, bool truncated, std::uint64_t module_gen) {
  std::uint64_t offset = 0;
  const std::uint32_t id = reserve(ips.size(), offset);
  if (id == 0 || id >= kMaxStacks) return 0;
  Entry& e = entry(id);
  std::memcpy(g_frames + offset % kFrameRing, ips.data(), ips.size_bytes());
  e.depth = static_cast<std::uint32_t>(ips.size());
  e.offset = offset;
  e.truncated = truncated ? 1 : 0;
  e.module_gen = module_gen;
  // Pairs with the acquire load in stack_view().
  e.ready.store(id, std::memory_order_release);
  count(format::Counter::kStacks);
  if (truncated) count(format::Counter::kTruncatedStacks);
  return id;
}

}  // namespace

bool stack_table_init() {
  if (g_entries == nullptr) {
    g_entries = static_cast<Entry*>(os::map(sizeof(Entry) * kEntryRing, true));
    g_frames = static_cast<std::uint64_t*>(os::map(sizeof(std::uint64_t) * kFrameRing, true));
    if (g_entries == nullptr || g_frames == nullptr) return false;
  }
  if (g_table_count.load() == 0) {
    Table* t = make_table(kFirstTableBits);
    if (t == nullptr) return false;
    g_tables[0].store(t);
    g_table_count.store(1);
  }
  return true;
}

void stack_table_reset() {
  const int n = g_table_count.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    Table* t = g_tables[i].exchange(nullptr);
    if (t != nullptr) os::unmap(t, t->mapped_bytes);
  }
  g_table_count.store(0);
  os::unmap(g_entries, sizeof(Entry) * kEntryRing);
  os::unmap(g_frames, sizeof(std::uint64_t) * kFrameRing);
  g_entries = nullptr;
  g_frames = nullptr;
  g_reserved.store(std::uint64_t{1} << kOffsetBits);
  g_written_id.store(1);
  g_frames_freed.store(0);
  stack_table_init();
}

std::uint32_t intern_stack_slow(std::uint64_t hash, std::span<const std::uint64_t> ips, bool truncated) {
  if (g_entries == nullptr) return 0;
  const int n = g_table_count.load(std::memory_order_acquire);
  for (int i = n - 1; i >= 0; --i) {
    if (const std::uint32_t id = find_in(*g_tables[i].load(std::memory_order_acquire), hash)) return id;
  }
  if (n == 0) return 0;
  // Read before the id is reserved, so every module these frames point into
  // is part of this generation (or of the next one, inside a dlopen). Taking
  // the loader's lock here, before any id exists, means the writer never
  // waits on a thread that waits for that lock.
  const std::uint64_t module_gen = refresh_modules();
  Table& t = *g_tables[n - 1].load(std::memory_order_acquire);
  if (t.used.load(std::memory_order_relaxed) * 2 > t.mask) grow(n);
  const std::uint32_t id = create_entry(ips, truncated, module_gen);
  if (id == 0) {
    count(format::Counter::kStackTableFull);
    return 0;
  }
  const std::uint64_t word = slot_word(hash, id);
  for (std::uint64_t i = hash & t.mask, probes = 0; probes <= t.mask; i = (i + 1) & t.mask, ++probes) {
    std::uint64_t w = t.slots[i].load(std::memory_order_acquire);
    if (w == 0 && t.slots[i].compare_exchange_strong(w, word, std::memory_order_acq_rel)) {
      t.used.fetch_add(1, std::memory_order_relaxed);
      return id;
    }
    // Another thread interned the same stack meanwhile: ours stays a twin.
    if (slot_matches(w, hash)) return id;
  }
  return id;  // the table is full: the stack keeps its id, later lookups make twins
}

std::uint32_t intern_stack(ThreadBuffer& buf, std::uint64_t hash, std::span<const std::uint64_t> ips, bool truncated) {
  StackCacheEntry& c = buf.cache[hash & (ThreadBuffer::kCacheEntries - 1)];
  if (c.hash == hash && c.depth == ips.size()) return c.id;
  const std::uint32_t id = intern_stack_slow(hash, ips, truncated);
  if (id != 0) c = StackCacheEntry{hash, id, static_cast<std::uint32_t>(ips.size())};
  return id;
}

std::uint32_t stack_id_end() {
  const auto end = static_cast<std::uint32_t>(g_reserved.load(std::memory_order_acquire) >> kOffsetBits);
  return end < kMaxStacks ? end : kMaxStacks;
}

StackView stack_view(std::uint32_t id) {
  const Entry& e = entry(id);
  // A reserved id is published by the thread that reserved it, soon.
  while (e.ready.load(std::memory_order_acquire) != id) sched_yield();
  return StackView{std::span<const std::uint64_t>(g_frames + e.offset % kFrameRing, e.depth), e.module_gen,
                   e.truncated != 0, true};
}

void stack_written(std::uint32_t id) {
  const Entry& e = entry(id);
  // Release pairs with room_for()'s acquire loads: the frames were read.
  g_frames_freed.store(e.offset + e.depth, std::memory_order_release);
  g_written_id.store(id + 1, std::memory_order_release);
}

}  // namespace memrec::preload
