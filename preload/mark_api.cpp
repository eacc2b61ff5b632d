// memrec_mark(), the one function libmemrec.so exports for programs to call
// (include/memrec/mark.h). Called by the program, not by a hooked allocator
// call, but held to the hooks' rules: no allocation, no lock, no syscall but
// the clock's vDSO read, never an abort.
#include "memrec/mark.h"

#include "memrec/format/records.h"
#include "recorder.h"
#include "recorder_state.h"
#include "thread_state.h"

#define MEMREC_EXPORT __attribute__((visibility("default")))

using namespace memrec::preload;

extern "C" MEMREC_EXPORT void memrec_mark(const char* label) {
  // Written while paused too (a range may start at it), but not once the
  // recording ended or never began (MEMREC_ONLY left this program out).
  if (!recording_frees()) return;
  if (HookScope::active()) {
    // A signal handler interrupted one of our hooks on this thread, whose
    // event is half written in the ring.
    count(memrec::format::Counter::kMarkersLost);
    return;
  }
  HookScope scope;
  if (label == nullptr) label = "";
  record_marker(memrec::format::Source::kApi, label, marker_label_bytes(label));
}
