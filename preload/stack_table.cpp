// The shared stack tables (see stack_table.h). Tables grow by chaining: when
// the newest is half full a table twice its size is added, new stacks go into
// the newest, and lookups probe every table newest first. Growing this way
// needs no lock; the rare cost is that two threads meeting a new stack while a
// table is added may give it two ids (FORMAT.md allows it).
#include "stack_table.h"

#include <sched.h>
#include <cstring>

#include "module_registry.h"
#include "os.h"
#include "recorder_state.h"
#include "thread_buffer.h"

namespace memrec::preload {
namespace {

constexpr std::uint32_t kMaxStacks = 1u << 24;
constexpr std::uint64_t kMaxFrameWords = 1ull << 27;  // 1 GiB of reserved address space
constexpr int kFirstTableBits = 12;
constexpr int kMaxTables = 16;

struct Slot {
  std::atomic<std::uint64_t> hash;
  std::atomic<std::uint32_t> id;  // 0 until the inserting thread has finished
  std::uint32_t unused;
};

struct Table {
  std::uint64_t mask;
  std::size_t mapped_bytes;
  std::atomic<std::uint64_t> used;
  Slot slots[1];  // `mask + 1` slots
};

struct Entry {
  std::atomic<std::uint32_t> ready;  // 1 when the fields below are written; 2 when invalid
  std::uint32_t depth;
  std::uint64_t module_gen;
  std::uint64_t offset;  // into g_frames
  std::uint8_t truncated;
};

std::atomic<Table*> g_tables[kMaxTables];
std::atomic<int> g_table_count{0};
Entry* g_entries = nullptr;
std::uint64_t* g_frames = nullptr;
std::atomic<std::uint32_t> g_next_id{1};
std::atomic<std::uint64_t> g_frames_used{0};

Table* make_table(int bits) {
  const std::uint64_t slots = 1ull << bits;
  const std::size_t bytes = sizeof(Table) + (slots - 1) * sizeof(Slot);
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

Entry& entry(std::uint32_t id) { return g_entries[id]; }

std::uint32_t wait_for_id(const Slot& s) {
  std::uint32_t id;
  while ((id = s.id.load(std::memory_order_acquire)) == 0) sched_yield();
  return id;
}

bool same_stack(std::uint32_t id, std::span<const std::uint64_t> ips, bool truncated) {
  const Entry& e = entry(id);
  while (e.ready.load(std::memory_order_acquire) == 0) sched_yield();
  return e.ready.load(std::memory_order_relaxed) == 1 && e.depth == ips.size() && (e.truncated != 0) == truncated &&
         std::memcmp(g_frames + e.offset, ips.data(), ips.size_bytes()) == 0;
}

std::uint32_t find_in(const Table& t, std::uint64_t hash, std::span<const std::uint64_t> ips, bool truncated) {
  for (std::uint64_t i = hash & t.mask;; i = (i + 1) & t.mask) {
    const std::uint64_t h = t.slots[i].hash.load(std::memory_order_acquire);
    if (h == 0) return 0;
    if (h == hash) {
      const std::uint32_t id = wait_for_id(t.slots[i]);
      if (same_stack(id, ips, truncated)) return id;
    }
  }
}

// Copies the frames into the arena and publishes a new id, or returns 0.
std::uint32_t create_entry(std::span<const std::uint64_t> ips, bool truncated, std::uint64_t module_gen) {
  const std::uint64_t offset = g_frames_used.fetch_add(ips.size(), std::memory_order_relaxed);
  if (offset + ips.size() > kMaxFrameWords) return 0;
  const std::uint32_t id = g_next_id.fetch_add(1, std::memory_order_relaxed);
  if (id >= kMaxStacks - 1) return 0;  // kMaxStacks - 1 marks "full" (below)
  Entry& e = entry(id);
  std::memcpy(g_frames + offset, ips.data(), ips.size_bytes());
  e.depth = static_cast<std::uint32_t>(ips.size());
  e.offset = offset;
  e.truncated = truncated ? 1 : 0;
  e.module_gen = module_gen;
  // Pairs with the acquire loads in same_stack() and stack_view().
  e.ready.store(1, std::memory_order_release);
  count(format::Counter::kStacks);
  if (truncated) count(format::Counter::kTruncatedStacks);
  return id;
}

}  // namespace

bool stack_table_init() {
  if (g_entries == nullptr) {
    g_entries = static_cast<Entry*>(os::map(sizeof(Entry) * kMaxStacks, true));
    g_frames = static_cast<std::uint64_t*>(os::map(sizeof(std::uint64_t) * kMaxFrameWords, true));
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
  // Dropping the pages returns their memory; the mappings stay reserved.
  os::unmap(g_entries, sizeof(Entry) * kMaxStacks);
  os::unmap(g_frames, sizeof(std::uint64_t) * kMaxFrameWords);
  g_entries = nullptr;
  g_frames = nullptr;
  g_next_id.store(1);
  g_frames_used.store(0);
  stack_table_init();
}

std::uint32_t intern_stack_slow(std::uint64_t hash, std::span<const std::uint64_t> ips, bool truncated) {
  if (g_entries == nullptr) return 0;
  const int n = g_table_count.load(std::memory_order_acquire);
  for (int i = n - 1; i >= 0; --i) {
    if (const std::uint32_t id = find_in(*g_tables[i].load(std::memory_order_acquire), hash, ips, truncated)) {
      return id;
    }
  }
  if (n == 0) return 0;
  // Read before the slot is claimed, so every module these frames point into
  // is part of this generation (or of the next one, inside a dlopen). Taking
  // the loader's lock here, before any id exists, means the writer never
  // waits on a thread that waits for that lock.
  const std::uint64_t module_gen = refresh_modules();
  Table& t = *g_tables[n - 1].load(std::memory_order_acquire);
  if (t.used.load(std::memory_order_relaxed) * 2 > t.mask) grow(n);
  for (std::uint64_t i = hash & t.mask, probes = 0; probes <= t.mask; i = (i + 1) & t.mask, ++probes) {
    Slot& s = t.slots[i];
    std::uint64_t h = s.hash.load(std::memory_order_acquire);
    if (h == 0 && s.hash.compare_exchange_strong(h, hash, std::memory_order_acq_rel)) {
      t.used.fetch_add(1, std::memory_order_relaxed);
      std::uint32_t id = create_entry(ips, truncated, module_gen);
      if (id == 0) {
        count(format::Counter::kStackTableFull);
        // Leave a slot that never matches: an id whose entry is invalid.
        id = kMaxStacks - 1;
        entry(id).ready.store(2, std::memory_order_release);
      }
      s.id.store(id, std::memory_order_release);
      return id == kMaxStacks - 1 ? 0 : id;
    }
    if (h == hash) {
      const std::uint32_t id = wait_for_id(s);
      if (same_stack(id, ips, truncated)) return id;
    }
  }
  count(format::Counter::kStackTableFull);
  return 0;
}

std::uint32_t intern_stack(ThreadBuffer& buf, std::span<const std::uint64_t> ips, bool truncated) {
  const std::uint64_t hash = hash_stack(ips, truncated);
  StackCacheEntry& c = buf.cache[hash & (ThreadBuffer::kCacheEntries - 1)];
  if (c.hash == hash && c.depth == ips.size()) return c.id;
  const std::uint32_t id = intern_stack_slow(hash, ips, truncated);
  if (id != 0) c = StackCacheEntry{hash, id, static_cast<std::uint32_t>(ips.size())};
  return id;
}

std::uint32_t stack_id_end() {
  const std::uint32_t end = g_next_id.load(std::memory_order_acquire);
  return end < kMaxStacks - 1 ? end : kMaxStacks - 1;
}

StackView stack_view(std::uint32_t id) {
  const Entry& e = entry(id);
  std::uint32_t ready;
  while ((ready = e.ready.load(std::memory_order_acquire)) == 0) sched_yield();
  if (ready != 1) return StackView{{}, 0, false, false};
  return StackView{std::span<const std::uint64_t>(g_frames + e.offset, e.depth), e.module_gen, e.truncated != 0, true};
}

}  // namespace memrec::preload
