// Every module (executable, shared library, vDSO) the process has had mapped,
// with a generation number that grows each time the set changes. Entries are
// never removed, so stacks of a dlclosed library still symbolize. Producers
// update it on the cold path of a new stack; the writer reads it without a
// lock (an entry is immutable once published, but for its unload generation).
#pragma once

#include <atomic>
#include <cstdint>

#include "memrec/format/record_encoder.h"

namespace memrec::preload {

inline constexpr int kMaxModuleSegments = 16;

struct Module {
  std::uint32_t id;
  std::uint64_t bias;
  std::uint64_t load_gen;
  std::atomic<std::uint64_t> unload_gen;  // 0 while loaded
  const void* phdr;                       // with `bias`, tells one load of a file from another
  std::uint32_t segment_count;
  format::Segment segments[kMaxModuleSegments];
  std::uint8_t build_id_size;
  std::uint8_t build_id[64];
  std::uint32_t path_size;
  char path[4096];
  // Bookkeeping: `seen` for refreshes (under the lock), the rest writer-only.
  bool seen;
  bool load_written;
  bool unload_written;
};

bool modules_init();

// Checks whether the loaded set changed since the last look (cheap when not)
// and records the change. Returns the generation now in force.
std::uint64_t refresh_modules();

// Writer side: how many entries are published, and entry `i` (0-based).
std::uint32_t module_count();
Module& module_at(std::uint32_t i);
// Makes the writer write every entry again (a new file after fork or exec).
void modules_mark_unwritten();

// pthread_atfork: keep the registry consistent across fork.
void modules_lock();
void modules_unlock();

}  // namespace memrec::preload
