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

// How far below the forwarding operator new's frame an allocation made
// inside it can be: the next operator new, a new-handler, the C++ runtime
// throwing bad_alloc take a few frames.
inline constexpr std::uintptr_t kMaxForwardDepthBytes = 64 * 1024;

// HOT PATH. Where the stack of an allocation starts: the frame of an
// operator new of ours that forwarded to the call being recorded
// (cxx_hooks.cpp), else `here`, the hook's own frame. That frame is live
// while we run below it with its return address in place; a start left
// behind when an exception unwound past it fails the test (the slot now
// belongs to another call) and is dropped.
[[gnu::always_inline]] inline StackStart take_stack_start(const StackStart& here) {
  if (t_thread.forward_pc == 0) [[likely]]
    return here;
  const std::uintptr_t ra_at = t_thread.forward_ra_at;
  if (here.sp < ra_at && ra_at - here.sp < kMaxForwardDepthBytes &&
      *reinterpret_cast<const std::uintptr_t*>(ra_at) == t_thread.forward_ra) {
    return StackStart{t_thread.forward_pc, t_thread.forward_sp, t_thread.forward_bp, true};
  }
  t_thread.forward_pc = 0;
  return here;
}

// Records an allocation if recording, counting a nested one as missed.
[[gnu::always_inline]] inline void on_alloc(format::AllocFn fn, const void* p, std::size_t size) {
  if (p == nullptr) return;
  if (HookScope::active()) [[unlikely]] {
    note_nested_alloc(p);
    return;
  }
  const StackStart from = take_stack_start(stack_here());
  if (!recording_allocs()) return;
  HookScope scope;
  record_alloc(from, fn, p, size);
}

// Records a free (also while paused: see FORMAT.md, "Recording"). Call it
// before the real free: once that returns, another thread may get `p` back
// from malloc, and that allocation must sort after this free.
inline void on_free(const void* p) {
  if (HookScope::active()) [[unlikely]] {
    record_nested_free(p);
    return;
  }
  if (!recording_frees()) return;
  HookScope scope;
  record_free(p);
}

}  // namespace memrec::preload
