// The process-wide recording state (see recorder_state.h) and the thread-local
// hook state (thread_state.h).
#include "recorder_state.h"

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

}  // namespace memrec::preload
