// Deduplicates backtraces into stack ids inside the process, lock-free. A
// thread first checks its own cache (ThreadBuffer::cache); a miss probes the
// shared hash tables, and a stack never seen before is copied into an
// append-only arena (the cold path). The writer walks that arena in id order
// to write each stack's definition once (FORMAT.md, "Stack").
#pragma once

#include <atomic>
#include <cstdint>
#include <span>

namespace memrec::preload {

struct ThreadBuffer;

// HOT PATH. A 64-bit hash of the frames (never 0).
inline std::uint64_t hash_stack(std::span<const std::uint64_t> ips, bool truncated) {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ (ips.size() * 2 + (truncated ? 1 : 0));
  for (const std::uint64_t ip : ips) {
    h = (h ^ ip) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  h ^= h >> 29;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 32;
  return h != 0 ? h : 1;
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

// HOT PATH. The thread cache in front of intern_stack_slow.
std::uint32_t intern_stack(ThreadBuffer& buf, std::span<const std::uint64_t> ips, bool truncated);

// Writer side: one past the highest id handed out so far.
std::uint32_t stack_id_end();
// Writer side: waits until `id` is fully written, then returns its view.
StackView stack_view(std::uint32_t id);

}  // namespace memrec::preload
