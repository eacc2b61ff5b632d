// The unwinding rule of one x86-64 code address, read from the module's
// .eh_frame_hdr and .eh_frame CFI. Called by unwind.cpp on a cache miss (a
// cold path): it reads only the loaded image, never allocates, and answers
// kComplex for anything it does not fully understand, so the caller falls
// back to libunwind.
#pragma once

#include <cstdint>

namespace memrec::preload {

enum class RuleKind : std::uint8_t {
  kEmpty = 0,  // cache slot unused
  kRsp,        // CFA = rsp + cfa_off
  kRbp,        // CFA = rbp + cfa_off
  kEnd,        // the return address is undefined: the outermost frame
  kComplex,    // no FDE, a signal frame, an expression or another register: ask libunwind
};

// How to get from a frame to its caller: CFA from rsp or rbp, the return
// address at CFA + 8 * ra_off8, and the caller's rbp at CFA + rbp_off (0: rbp
// is unchanged by this frame). Eight bytes, trivial, so a cache of them in
// fresh mmap()ed memory costs nothing until used.
struct UnwindRule {
  std::int32_t cfa_off;
  std::int16_t rbp_off;
  std::int8_t ra_off8;
  RuleKind kind;
};
static_assert(sizeof(UnwindRule) == 8);

// The rule in force at `pc` (for a return address, pass the address of the
// call: return address - 1). Takes the loader's lock (dl_iterate_phdr).
[[gnu::cold, gnu::noinline]] UnwindRule find_unwind_rule(std::uintptr_t pc);

// Returns a counter that changes when a module is unloaded (dlpi_subs), so
// that cached rules can be dropped.
std::uint64_t modules_unloaded();

}  // namespace memrec::preload
