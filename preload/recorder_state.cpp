// The process-wide recording state (see recorder_state.h) and the thread-local
// hook state (thread_state.h).
#include "recorder_state.h"

#include "recorder.h"
#include "thread_state.h"

namespace memrec::preload {

std::atomic<RecorderState> g_state{RecorderState::kEarly};
std::atomic<bool> g_enabled{true};
std::atomic<std::uint64_t> g_counters[kCounterSlots];
__thread ThreadState t_thread __attribute__((tls_model("initial-exec")));

void count_miss(bool recording) {
  if (t_thread.depth == HookDepth::kHook && recording) count(format::Counter::kMissedReentrant);
  if (t_thread.depth == HookDepth::kProbe) t_thread.probe_hit = true;
}

void note_nested_alloc(const void* p) {
  // Not recorded either way: counted, so the dump says so.
  count_miss(recording_allocs());
  if (t_thread.depth != HookDepth::kLibdl) return;
  // Remembered, so that its free inside our own dl call is not taken for the program's.
  for (std::uintptr_t& slot : t_thread.libdl_blocks) {
    if (slot == 0) {
      slot = reinterpret_cast<std::uintptr_t>(p);
      return;
    }
  }
}

void record_nested_free(const void* p) {
  if (t_thread.depth != HookDepth::kLibdl) {
    count_miss(recording_frees());
    return;
  }
  // glibc's dl functions (_dlerror_run, glibc 2.34 on) free the message a
  // failed dl call of this thread left for dlerror(), and the object that
  // holds it, when the next call starts or succeeds. Our own dlsym can be
  // that call, and the blocks the program's, recorded when it made them
  // (mariadbd looks for tcmalloc's functions before its first new).
  for (std::uintptr_t& slot : t_thread.libdl_blocks) {
    if (slot == reinterpret_cast<std::uintptr_t>(p)) {
      slot = 0;
      return;
    }
  }
  if (recording_frees()) record_free(p);
}

}  // namespace memrec::preload
