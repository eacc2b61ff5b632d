// Per-thread state of the preload. Initial-exec TLS of trivial types only: a
// thread_local with a constructor would register a destructor that can
// allocate, and general-dynamic TLS can call malloc on first access.
#pragma once

#include <cstdint>

namespace memrec::preload {

struct ThreadBuffer;

enum class HookDepth : std::uint8_t {
  kNone = 0,
  kHook = 1,      // inside one of our hooks: a nested program allocation is a miss
  kInternal = 2,  // our own work (init, the writer thread): nested calls are ours, not misses
  kProbe = 3,     // trying the program's operator new and delete (cxx_hooks.cpp): a nested call sets probe_hit
  kLibdl = 4,     // our own dlsym or dlopen: nested allocations are ours, a nested free may be the program's
};

struct ThreadState {
  HookDepth depth;
  bool attach_failed;        // mapping this thread's buffer failed once; do not retry per event
  ThreadBuffer* buffer;      // mapped on the thread's first recorded event
  std::uint64_t last_stamp;  // order_stamp() never goes backwards on a thread
  bool probe_hit;            // a hook was reached under HookDepth::kProbe
  // Where the stacks of allocations made inside an operator new of ours start
  // while the next operator new runs (cxx_hooks.cpp): that frame's pc, sp
  // and bp, and where its return address is, with the value it must still
  // hold (hook_events.h). pc 0: none.
  std::uintptr_t forward_pc;
  std::uintptr_t forward_sp;
  std::uintptr_t forward_bp;
  std::uintptr_t forward_ra_at;
  std::uintptr_t forward_ra;
  // Blocks our own dlsym or dlopen allocated (HookDepth::kLibdl): glibc keeps
  // a failed call's message until the thread's next dl call, and its free
  // there is ours, not the program's. 0: an empty slot.
  std::uintptr_t libdl_blocks[4];
};

extern __thread ThreadState t_thread __attribute__((tls_model("initial-exec")));

// Marks the thread as inside a hook for the scope's life.
class HookScope {
 public:
  explicit HookScope(HookDepth depth = HookDepth::kHook) : saved_(t_thread.depth) { t_thread.depth = depth; }
  ~HookScope() { t_thread.depth = saved_; }
  HookScope(const HookScope&) = delete;
  HookScope& operator=(const HookScope&) = delete;

  static bool active() { return t_thread.depth != HookDepth::kNone; }

 private:
  HookDepth saved_;
};

}  // namespace memrec::preload
