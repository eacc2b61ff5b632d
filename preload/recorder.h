// What a hook records once it has decided to: the event, its order stamp and
// (for allocations) its stack, written into the calling thread's ring. The
// hooks in hooks.cpp decide whether to record; these functions only record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "memrec/format/records.h"
#include "unwind.h"

namespace memrec::preload {

// The functions that record a stack walk it from `from`: stack_here() in the
// hook, whose frame is the innermost one the walk sees.
// Stamps are taken inside: after the real allocation returned.
void record_alloc(const StackStart& from, format::AllocFn fn, const void* p, std::size_t size);
// `free_ns` was stamped before the real realloc; the allocation stamp is now.
void record_realloc(const StackStart& from, format::AllocFn fn, std::uint64_t free_ns, const void* old_p,
                    const void* new_p, std::size_t size);
// Stamps inside: call before the real free.
void record_free(const void* p);
// A free whose stamp was taken earlier (a realloc that freed, or was paused).
void record_free_at(std::uint64_t free_ns, const void* p);
void record_mmap(const StackStart& from, const void* p, std::size_t size, int prot, int flags);
void record_munmap(const void* p, std::size_t size);
void record_mremap(const StackStart& from, std::uint64_t free_ns, const void* old_p, std::size_t old_size,
                   const void* new_p, std::size_t new_size);

// The bytes of `label` a marker keeps: all of it up to kMaxMarkerLabelBytes,
// else that many less the bytes of a UTF-8 character the cut would split.
inline std::size_t marker_label_bytes(const char* label) {
  std::size_t n = strnlen(label, format::kMaxMarkerLabelBytes + 1);
  if (n <= format::kMaxMarkerLabelBytes) return n;
  n = format::kMaxMarkerLabelBytes;
  // A continuation byte (10xxxxxx) at the cut belongs to the character before it.
  while (n > 0 && (static_cast<unsigned char>(label[n]) & 0xc0) == 0x80) --n;
  return n;
}

// A marker in this thread's ring, after the events before it and before
// those after it (unique_stamp). False when it could not be recorded (no
// ring, or the lossy mode dropped it).
bool record_marker(format::Source source, const char* label, std::size_t bytes);

}  // namespace memrec::preload
