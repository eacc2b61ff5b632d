// Backtraces into a fixed array. On x86-64 our own unwinder walks the stack
// with a per-thread cache from code address to unwinding rule (cfi.h), read
// from the module's CFI once per address and thread; a frame costs a probe
// and one or two loads, every load checked against the thread's stack. A
// stack with a frame it cannot follow (no FDE, a signal frame, a DWARF
// expression, a read outside the stack) is taken again by libunwind's
// unw_backtrace. The walk starts at the hook's own frame (stack_here()), not
// at the walker's; our frames (and libunwind's) are cut off, so a stack starts
// at the caller of the allocation function.
#pragma once

#include <cstddef>
#include <cstdint>

#include "cfi.h"

namespace memrec::preload {

// Room for libunwind's and our own frames, which are cut from the front.
inline constexpr std::size_t kUnwindOwnFrames = 8;
// Room for a backtrace's ips: kMaxDepthLimit + 1 + our own frames.
inline constexpr std::size_t kMaxTraceFrames = 256 + 1 + kUnwindOwnFrames;
// How deep our walk goes, beyond max_depth: a stack cut at max_depth is
// still walked to its end when it is not deeper than this, so that the next
// walk can reuse it.
inline constexpr std::size_t kMaxWalkFrames = 1024;

// The program's frames of a backtrace: ips[first, first + depth), or, when
// in_trace, still only in the cache's trace (trace_ips() copies them out).
struct Backtrace {
  std::size_t first;
  std::size_t depth;
  bool truncated;
  bool in_trace;
  std::uint64_t hash;  // hash_stack() of those frames
};

// Where a walk starts: a point in a frame of ours that stays live while the
// walk runs (the hook's), with its pc, rsp and rbp as they were there, which
// the frame's CFI at pc describes.
struct StackStart {
  std::uintptr_t pc;
  std::uintptr_t sp;
  std::uintptr_t bp;
  // The frame is an operator new of ours that forwarded to the next one,
  // which called the hook now recording (hook_events.h): libunwind's walk,
  // which starts further in, cuts that allocator's frames too.
  bool forwarded;
};

// HOT PATH. This point of the calling function, for capture_backtrace().
// Always inlined, so the walk starts in the hook's frame and need not step
// the frames of the recorder and the walker below it, which are the same on
// every call and would be cut off anyway. Any point of the frame is as good
// as another: the CFI describes each instruction (GCC emits asynchronous
// unwind tables on x86-64), and the slots it names for the return address and
// a saved rbp stay put for the frame's life.
[[gnu::always_inline]] inline StackStart stack_here() {
  StackStart s{0, 0, 0, false};
#if defined(__x86_64__)
  asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2" : "=r"(s.pc), "=r"(s.sp), "=r"(s.bp));
#endif
  return s;
}

// One frame of the last walk: the registers the frame was entered with (bp:
// the value it had there, which the walk relies on only where bp_needed), the
// stack slots its caller's return address and rbp were read from, the stack
// hash (stack_table.h) folded from the outermost frame down to this one, and
// where its checks end in UnwindCache::check.
struct TraceFrame {
  std::uintptr_t pc;
  std::uintptr_t sp;
  std::uintptr_t bp;
  std::uintptr_t ra_at;
  std::uintptr_t bp_at;  // 0: rbp unchanged
  std::uint64_t hash;
  std::uint32_t check_end;  // one past its last check; its first is the outer frame's check_end
  bool uses_bp;             // the frame's CFA is rbp-based
  bool bp_needed;  // the rbp it was entered with is used by it, or passed unchanged to an outer frame that needs it
};

// One slot the reuse check of unchanged frames reads (unwind.cpp), and the
// value it must hold: a frame's return address slot and its caller's pc, and
// for a frame that saved an rbp an outer frame needs, that slot and the rbp.
// 16 bytes, apart from the 56 of TraceFrame, so the check of a frame is one
// line of a contiguous run (two for a frame-pointer frame).
struct TraceCheck {
  std::uintptr_t at;
  std::uintptr_t want;
};

// One thread's unwinding state: lives in its ThreadBuffer. Its fresh
// mmap()ed pages are zero, and the arrays are left uninitialised by the
// constructor, so only the pages used are touched.
struct UnwindCache {
  static constexpr int kBits = 13;
  struct Slot {
    std::uint64_t pc;  // the looked-up address (a return address - 1); 0 = empty
    UnwindRule rule;
  };
  std::uintptr_t stack_lo = 0;  // the thread's stack as far as it can be read (unwind.cpp)
  std::uintptr_t stack_hi = 0;
  std::uint32_t stack_switches = 0;  // bounds lookups that found another stack (or none)
  std::uint64_t subs = 0;            // modules_unloaded() when the slots were filled
  // The last walk, outermost frame first: trace_n frames, of which the
  // innermost `skip` are our own; complete if it ended at the outermost frame.
  std::uint32_t trace_n = 0;
  std::uint32_t skip = 0;
  bool complete = false;
  TraceFrame trace[kMaxWalkFrames];
  // The checks of trace[1..], outermost first, each with its frame's index;
  // check[0] is the outermost frame's, which never passes (that frame is
  // never checked: it has no caller).
  TraceCheck check[2 * kMaxWalkFrames + 1];
  std::uint32_t check_frame[2 * kMaxWalkFrames + 1];
  TraceFrame fresh[kMaxWalkFrames];  // a walk's new frames, innermost first
  Slot slots[1u << kBits];
};

// Finds our own and libunwind's code ranges and sets libunwind's caching.
void unwind_init();

// Whether `pc` is in libunwind's code (its calls to pipe2 and close).
bool in_unwinder(std::uintptr_t pc);

// HOT PATH. Fills `ips` (room for kMaxTraceFrames) with the stack from
// `from` (taken by stack_here() in a frame of ours that is still live) and
// returns where the program's frames are, whether the stack was deeper than max_depth, and its
// hash. The hash of a cut stack covers all its frames (up to
// kMaxWalkFrames), so stacks that differ only beyond the cut get different
// ids with the same frames (FORMAT.md allows such twins).
Backtrace capture_backtrace(UnwindCache& cache, const StackStart& from, std::uint64_t* ips, std::size_t max_depth);

// Copies the program's frames of the last walk, innermost first, into `ips`
// (for a Backtrace with in_trace).
void trace_ips(const UnwindCache& cache, std::size_t depth, std::uint64_t* ips);

}  // namespace memrec::preload
