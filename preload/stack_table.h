// Deduplicates backtraces into stack ids inside the process, lock-free. A
// thread first checks its own cache (ThreadBuffer::cache); a miss probes the
// shared hash tables, and a stack never seen before is copied into a ring
// (the cold path). The writer reads that ring in id order to write each
// stack's definition once (FORMAT.md, "Stack"), then frees its room.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>

namespace memrec::preload {

struct ThreadBuffer;

// HOT PATH. The stack hash folds frames from the outermost in, so that the
// unwinder can keep the hash of a stack's unchanged outer part between two
// backtraces (unwind.cpp) and fold only the frames that changed.
inline constexpr std::uint64_t kStackHashSeed = 0x9e3779b97f4a7c15ull;
inline std::uint64_t hash_fold(std::uint64_t h, std::uint64_t ip) {
  h = (h ^ ip) * 0xff51afd7ed558ccdull;
  return h ^ (h >> 32);
}
inline std::uint64_t hash_finish(std::uint64_t h, std::size_t depth, bool truncated) {
  h ^= depth * 2 + (truncated ? 1 : 0);
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 32;
  return h != 0 ? h : 1;
}

// HOT PATH. A 64-bit hash of the frames (never 0).
inline std::uint64_t hash_stack(std::span<const std::uint64_t> ips, bool truncated) {
  std::uint64_t h = kStackHashSeed;
  for (std::size_t i = ips.size(); i-- > 0;) h = hash_fold(h, ips[i]);
  return hash_finish(h, ips.size(), truncated);
}

// The definition of one stack as the writer reads it.
struct StackView {
  std::span<const std::uint64_t> ips;
  std::uint64_t module_gen;
  bool truncated;
  bool valid;  // false for an id whose frames did not fit: skip it
};

// Prepares the tables; false if the memory cannot be reserved.
bool stack_table_init();
// In a fork child: forget every stack (ids are per process).
void stack_table_reset();

// Returns the id of this stack, interning it on first sight; 0 if the table
// is full (counted).
[[gnu::cold, gnu::noinline]] std::uint32_t intern_stack_slow(std::uint64_t hash, std::span<const std::uint64_t> ips,
                                                             bool truncated);

// HOT PATH. The thread cache in front of intern_stack_slow; `hash` is
// hash_stack(ips, truncated).
std::uint32_t intern_stack(ThreadBuffer& buf, std::uint64_t hash, std::span<const std::uint64_t> ips, bool truncated);
inline std::uint32_t intern_stack(ThreadBuffer& buf, std::span<const std::uint64_t> ips, bool truncated) {
  return intern_stack(buf, hash_stack(ips, truncated), ips, truncated);
}

// Writer side: one past the highest id handed out so far.
std::uint32_t stack_id_end();
// Writer side: waits until `id` is fully written, then returns its view.
StackView stack_view(std::uint32_t id);
// Writer side: stack `id` (and every one before it) is written; its frames'
// room may be reused.
void stack_written(std::uint32_t id);

}  // namespace memrec::preload
