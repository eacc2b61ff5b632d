// C++ operator new and delete, in every form. libstdc++'s call malloc and
// free, which hooks.cpp records; but an allocator linked into the program
// (mimalloc, jemalloc, tcmalloc) replaces them with its own, which mostly or
// never reach malloc: without these hooks the C++ allocations of such a
// program were lost (tcmalloc's all of them; jemalloc's deletes still reached
// free, as frees of blocks never seen).
// We export them all, forward each to the next definition (dlsym RTLD_NEXT),
// and learn once, by trying each (classify()), whether it reaches one of our
// hooks: if it does we only forward (the nested hook records), if not we
// record here, as malloc or aligned_alloc and as a Free.
#include <dlfcn.h>
#include <link.h>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include "hook_events.h"
#include "lifecycle.h"
#include "log.h"
#include "thread_state.h"

#define MEMREC_EXPORT __attribute__((visibility("default")))

namespace memrec::preload {
namespace {

using format::AllocFn;

enum Op : unsigned {
  kNew,
  kNewArray,
  kNewNothrow,
  kNewArrayNothrow,
  kNewAligned,
  kNewArrayAligned,
  kNewAlignedNothrow,
  kNewArrayAlignedNothrow,
  kDelete,
  kDeleteArray,
  kDeleteSized,
  kDeleteArraySized,
  kDeleteAligned,
  kDeleteArrayAligned,
  kDeleteSizedAligned,
  kDeleteArraySizedAligned,
  kDeleteNothrow,
  kDeleteArrayNothrow,
  kDeleteAlignedNothrow,
  kDeleteArrayAlignedNothrow,
  kOpCount,
};

// The Itanium C++ ABI's names, by Op (LP64: std::size_t is unsigned long, `m`).
constexpr const char* kSymbols[kOpCount] = {
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
};

using NewFn = void* (*)(std::size_t);
using NewNothrowFn = void* (*)(std::size_t, const std::nothrow_t&);
using NewAlignedFn = void* (*)(std::size_t, std::align_val_t);
using NewAlignedNothrowFn = void* (*)(std::size_t, std::align_val_t, const std::nothrow_t&);
using DeleteFn = void (*)(void*);
using DeleteSizedFn = void (*)(void*, std::size_t);
using DeleteAlignedFn = void (*)(void*, std::align_val_t);
using DeleteSizedAlignedFn = void (*)(void*, std::size_t, std::align_val_t);
using DeleteNothrowFn = void (*)(void*, const std::nothrow_t&);
using DeleteAlignedNothrowFn = void (*)(void*, std::align_val_t, const std::nothrow_t&);

// Filled by classify(), possibly by several threads at once with the same
// values: atomics, so those writes are not a race.
std::atomic<void*> g_next[kOpCount];
std::atomic<bool> g_records[kOpCount];  // false until classified: forward only
std::atomic<bool> g_classified{false};

// Keeps the object that defines `fn` loaded for good: the table points into
// it, and a library dlopen()ed and dlclose()d by the program could otherwise
// take its operators away (libstdc++ is never unloaded, an allocator may be).
// The object is found with _dl_find_object (glibc 2.35), which only looks
// addresses up: dladdr, still used with an older glibc, also searches the
// object's symbols for the nearest one, 160,000 instructions a call in
// libstdc++, and it ran for each of the 20 forms at a C++ program's first
// `new` (callgrind: 3.2 M, about 1 ms). Consecutive forms nearly always share
// one object, pinned once; the executable (empty name) is never unloaded.
void pin(void* fn) {
#if __GLIBC_PREREQ(2, 35)
  static std::atomic<const link_map*> g_last_pinned{nullptr};
  dl_find_object found{};
  if (_dl_find_object(fn, &found) != 0 || found.dlfo_link_map == nullptr) return;
  const link_map* object = found.dlfo_link_map;
  if (g_last_pinned.exchange(object, std::memory_order_relaxed) == object) return;
  if (object->l_name != nullptr && object->l_name[0] != '\0') dlopen(object->l_name, RTLD_LAZY | RTLD_NOLOAD);
#else
  Dl_info info;
  if (dladdr(fn, &info) != 0 && info.dli_fname != nullptr) dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
#endif
}

// The next definition of `symbol`: after us in the global scope, else in a C++
// runtime loaded with RTLD_LOCAL (a library dlopen()ed so, whose references
// to operator new still find ours first). Pinned.
void* find_next(const char* symbol) {
  void* fn = dlsym(RTLD_NEXT, symbol);
  for (const char* runtime : {"libstdc++.so.6", "libc++.so.1"}) {
    if (fn != nullptr) break;
    if (void* handle = dlopen(runtime, RTLD_LAZY | RTLD_NOLOAD)) fn = dlsym(handle, symbol);
  }
  if (fn != nullptr) pin(fn);
  return fn;
}

template <typename Fn>
Fn next(Op op) {
  return reinterpret_cast<Fn>(g_next[op].load(std::memory_order_relaxed));
}

// Calls `make` (a next operator new), then `release` on what it returned (the
// matching next operator delete), each under HookDepth::kProbe: a hook of ours
// reached inside either sets t_thread.probe_hit. What reached none records here.
template <typename Make, typename Release>
void probe(Op new_op, Op delete_op, bool classify_new, Make make, Release release) {
  if (g_next[new_op].load(std::memory_order_relaxed) == nullptr) return;
  t_thread.probe_hit = false;
  void* p = make();
  if (classify_new) g_records[new_op].store(!t_thread.probe_hit, std::memory_order_relaxed);
  if (p == nullptr || g_next[delete_op].load(std::memory_order_relaxed) == nullptr) return;
  t_thread.probe_hit = false;
  release(p);
  g_records[delete_op].store(!t_thread.probe_hit, std::memory_order_relaxed);
}

// On the first call of any of these hooks. Before it, and for an Op whose
// next definition is missing, the hooks forward without recording.
[[gnu::cold, gnu::noinline]] void classify() {
  // Inside a scope of ours (a probe's own nested calls, say): use the table
  // as filled so far; probing again from here would recurse.
  if (HookScope::active()) return;
  if (!early_init_done()) early_init();
  {
    HookScope internal(HookDepth::kLibdl);  // dlsym's allocations are ours, its frees maybe not
    for (unsigned op = 0; op < kOpCount; ++op) g_next[op].store(find_next(kSymbols[op]), std::memory_order_relaxed);
  }
  HookScope probing(HookDepth::kProbe);
  const std::nothrow_t nothrow{};
  const auto a16 = std::align_val_t{16};
  // The plain forms first: libstdc++'s others call them, and a probe that
  // reaches a plain form we record must see it classified.
  probe(
      kNew, kDelete, true, [] { return next<NewFn>(kNew)(8); }, [](void* p) { next<DeleteFn>(kDelete)(p); });
  probe(
      kNewAligned, kDeleteAligned, true, [&] { return next<NewAlignedFn>(kNewAligned)(8, a16); },
      [&](void* p) { next<DeleteAlignedFn>(kDeleteAligned)(p, a16); });
  probe(
      kNewArray, kDeleteArray, true, [] { return next<NewFn>(kNewArray)(8); },
      [](void* p) { next<DeleteFn>(kDeleteArray)(p); });
  probe(
      kNewArrayAligned, kDeleteArrayAligned, true, [&] { return next<NewAlignedFn>(kNewArrayAligned)(8, a16); },
      [&](void* p) { next<DeleteAlignedFn>(kDeleteArrayAligned)(p, a16); });
  probe(
      kNewNothrow, kDeleteNothrow, true, [&] { return next<NewNothrowFn>(kNewNothrow)(8, nothrow); },
      [&](void* p) { next<DeleteNothrowFn>(kDeleteNothrow)(p, nothrow); });
  probe(
      kNewArrayNothrow, kDeleteArrayNothrow, true, [&] { return next<NewNothrowFn>(kNewArrayNothrow)(8, nothrow); },
      [&](void* p) { next<DeleteNothrowFn>(kDeleteArrayNothrow)(p, nothrow); });
  probe(
      kNewAlignedNothrow, kDeleteAlignedNothrow, true,
      [&] { return next<NewAlignedNothrowFn>(kNewAlignedNothrow)(8, a16, nothrow); },
      [&](void* p) { next<DeleteAlignedNothrowFn>(kDeleteAlignedNothrow)(p, a16, nothrow); });
  probe(
      kNewArrayAlignedNothrow, kDeleteArrayAlignedNothrow, true,
      [&] { return next<NewAlignedNothrowFn>(kNewArrayAlignedNothrow)(8, a16, nothrow); },
      [&](void* p) { next<DeleteAlignedNothrowFn>(kDeleteArrayAlignedNothrow)(p, a16, nothrow); });
  // The sized deletes, on blocks of the forms already classified.
  probe(
      kNew, kDeleteSized, false, [] { return next<NewFn>(kNew)(8); },
      [](void* p) { next<DeleteSizedFn>(kDeleteSized)(p, 8); });
  probe(
      kNewArray, kDeleteArraySized, false, [] { return next<NewFn>(kNewArray)(8); },
      [](void* p) { next<DeleteSizedFn>(kDeleteArraySized)(p, 8); });
  probe(
      kNewAligned, kDeleteSizedAligned, false, [&] { return next<NewAlignedFn>(kNewAligned)(8, a16); },
      [&](void* p) { next<DeleteSizedAlignedFn>(kDeleteSizedAligned)(p, 8, a16); });
  probe(
      kNewArrayAligned, kDeleteArraySizedAligned, false, [&] { return next<NewAlignedFn>(kNewArrayAligned)(8, a16); },
      [&](void* p) { next<DeleteSizedAlignedFn>(kDeleteArraySizedAligned)(p, 8, a16); });
  g_classified.store(true, std::memory_order_release);
}

// HOT PATH: a load and a branch once classified.
[[gnu::always_inline]] inline void ensure_classified() {
  if (!g_classified.load(std::memory_order_acquire)) [[unlikely]]
    classify();
}

inline bool records(Op op) { return g_records[op].load(std::memory_order_relaxed); }

// No next definition (none found, or not yet: a probe's nested call never
// lacks one). malloc and free are ours, so they record. A throwing form
// cannot throw std::bad_alloc without the C++ runtime this library must not
// need, so it stops the program with a message, as terminate() would.
[[gnu::cold, gnu::noinline]] void* new_without_runtime(std::size_t size, std::size_t alignment, bool throws) {
  void* p = alignment != 0 ? aligned_alloc(alignment, size != 0 ? size : 1) : malloc(size != 0 ? size : 1);
  if (p == nullptr && throws) {
    log_line({"operator new failed and no C++ runtime was found to throw std::bad_alloc: aborting"});
    abort();
  }
  return p;
}

// HOT PATH. One form of operator new: `align` is 0 for the plain forms, and
// `args` are what follows the size. Inlined into the exported function,
// whose frame the stack walk starts from.
//
// Every allocation made while the next operator new runs is this `new` to
// the program: the block itself when that operator new calls our malloc
// (libstdc++'s does), and what a new-handler or a thrown bad_alloc allocate.
// Their stacks would start with the next operator new and ours, so the
// outermost of our operator new frames (new[] calls new) is left in
// t_thread as where their walks start (hook_events.h), and cleared on
// return. An exception unwinding past this frame leaves it set; the next
// hook sees it is stale.
template <Op op, typename Fn, bool kThrows, typename... Args>
[[gnu::always_inline]] inline void* forward_new(std::size_t size, std::size_t align, Args... args) {
  ensure_classified();
  const auto fn = next<Fn>(op);
  const bool sets_start = t_thread.forward_pc == 0 && !HookScope::active();
  if (sets_start) {
    const StackStart here = stack_here();
    t_thread.forward_sp = here.sp;
    t_thread.forward_bp = here.bp;
    t_thread.forward_ra_at = reinterpret_cast<std::uintptr_t>(__builtin_dwarf_cfa()) - sizeof(std::uintptr_t);
    t_thread.forward_ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
    t_thread.forward_pc = here.pc;
  }
  void* p = fn != nullptr ? fn(size, args...) : new_without_runtime(size, align, kThrows);
  if (sets_start) t_thread.forward_pc = 0;
  if (records(op)) on_alloc(align != 0 ? AllocFn::kAlignedAlloc : AllocFn::kMalloc, p, size);
  return p;
}

// HOT PATH. One form of operator delete; records before the real delete, as
// free() records before the real free.
template <Op op, typename Fn, typename... Args>
[[gnu::always_inline]] inline void forward_delete(void* p, Args... args) {
  ensure_classified();
  if (p != nullptr && records(op)) on_free(p);
  if (const auto fn = next<Fn>(op)) return fn(p, args...);
  free(p);
}

}  // namespace
}  // namespace memrec::preload

using namespace memrec::preload;

// Each form: classify once, forward, record when the next definition does
// not reach our malloc or free. The stack of an allocation recorded here
// starts at the caller of operator new.

MEMREC_EXPORT void* operator new(std::size_t size) { return forward_new<kNew, NewFn, true>(size, 0); }

MEMREC_EXPORT void* operator new[](std::size_t size) { return forward_new<kNewArray, NewFn, true>(size, 0); }

MEMREC_EXPORT void* operator new(std::size_t size, const std::nothrow_t& nt) noexcept {
  return forward_new<kNewNothrow, NewNothrowFn, false, const std::nothrow_t&>(size, 0, nt);
}

MEMREC_EXPORT void* operator new[](std::size_t size, const std::nothrow_t& nt) noexcept {
  return forward_new<kNewArrayNothrow, NewNothrowFn, false, const std::nothrow_t&>(size, 0, nt);
}

MEMREC_EXPORT void* operator new(std::size_t size, std::align_val_t al) {
  return forward_new<kNewAligned, NewAlignedFn, true>(size, static_cast<std::size_t>(al), al);
}

MEMREC_EXPORT void* operator new[](std::size_t size, std::align_val_t al) {
  return forward_new<kNewArrayAligned, NewAlignedFn, true>(size, static_cast<std::size_t>(al), al);
}

MEMREC_EXPORT void* operator new(std::size_t size, std::align_val_t al, const std::nothrow_t& nt) noexcept {
  return forward_new<kNewAlignedNothrow, NewAlignedNothrowFn, false, std::align_val_t, const std::nothrow_t&>(
      size, static_cast<std::size_t>(al), al, nt);
}

MEMREC_EXPORT void* operator new[](std::size_t size, std::align_val_t al, const std::nothrow_t& nt) noexcept {
  return forward_new<kNewArrayAlignedNothrow, NewAlignedNothrowFn, false, std::align_val_t, const std::nothrow_t&>(
      size, static_cast<std::size_t>(al), al, nt);
}

MEMREC_EXPORT void operator delete(void* p) noexcept { forward_delete<kDelete, DeleteFn>(p); }

MEMREC_EXPORT void operator delete[](void* p) noexcept { forward_delete<kDeleteArray, DeleteFn>(p); }

MEMREC_EXPORT void operator delete(void* p, std::size_t size) noexcept {
  forward_delete<kDeleteSized, DeleteSizedFn>(p, size);
}

MEMREC_EXPORT void operator delete[](void* p, std::size_t size) noexcept {
  forward_delete<kDeleteArraySized, DeleteSizedFn>(p, size);
}

MEMREC_EXPORT void operator delete(void* p, std::align_val_t al) noexcept {
  forward_delete<kDeleteAligned, DeleteAlignedFn>(p, al);
}

MEMREC_EXPORT void operator delete[](void* p, std::align_val_t al) noexcept {
  forward_delete<kDeleteArrayAligned, DeleteAlignedFn>(p, al);
}

MEMREC_EXPORT void operator delete(void* p, std::size_t size, std::align_val_t al) noexcept {
  forward_delete<kDeleteSizedAligned, DeleteSizedAlignedFn>(p, size, al);
}

MEMREC_EXPORT void operator delete[](void* p, std::size_t size, std::align_val_t al) noexcept {
  forward_delete<kDeleteArraySizedAligned, DeleteSizedAlignedFn>(p, size, al);
}

MEMREC_EXPORT void operator delete(void* p, const std::nothrow_t& nt) noexcept {
  forward_delete<kDeleteNothrow, DeleteNothrowFn, const std::nothrow_t&>(p, nt);
}

MEMREC_EXPORT void operator delete[](void* p, const std::nothrow_t& nt) noexcept {
  forward_delete<kDeleteArrayNothrow, DeleteNothrowFn, const std::nothrow_t&>(p, nt);
}

MEMREC_EXPORT void operator delete(void* p, std::align_val_t al, const std::nothrow_t& nt) noexcept {
  forward_delete<kDeleteAlignedNothrow, DeleteAlignedNothrowFn, std::align_val_t, const std::nothrow_t&>(p, al, nt);
}

MEMREC_EXPORT void operator delete[](void* p, std::align_val_t al, const std::nothrow_t& nt) noexcept {
  forward_delete<kDeleteArrayAlignedNothrow, DeleteAlignedNothrowFn, std::align_val_t, const std::nothrow_t&>(p, al,
                                                                                                              nt);
}
