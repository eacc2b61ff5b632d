// HOT PATH. What every allocation hook does once the real call returned
// (hooks.cpp, cxx_hooks.cpp): record, or count a nested call as missed.
// Always inlined, like every caller of stack_here(): the stack is walked
// from the exported function's own frame.
#pragma once

#include <cstddef>

#include "memrec/format/records.h"
#include "recorder.h"
#include "recorder_state.h"
#include "thread_state.h"

namespace memrec::preload {

// Records an allocation if recording, counting a nested one as missed.
[[gnu::always_inline]] inline void on_alloc(format::AllocFn fn, const void* p, std::size_t size) {
  if (p == nullptr) return;
  if (HookScope::active()) [[unlikely]] {
    count_miss(recording_allocs());
    return;
  }
  if (!recording_allocs()) return;
  HookScope scope;
  record_alloc(stack_here(), fn, p, size);
}

// Records a free (also while paused: see FORMAT.md, "Recording"). Call it
// before the real free: once that returns, another thread may get `p` back
// from malloc, and that allocation must sort after this free.
inline void on_free(const void* p) {
  if (HookScope::active()) [[unlikely]] {
    count_miss(recording_frees());
    return;
  }
  if (!recording_frees()) return;
  HookScope scope;
  record_free(p);
}

}  // namespace memrec::preload
