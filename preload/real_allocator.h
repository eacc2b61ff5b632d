// The allocator we forward to: the next definition after us in the lookup
// order (dlsym RTLD_NEXT), so a program linked against jemalloc or tcmalloc
// keeps it. dlsym itself allocates; until the table is filled those calls are
// served from a static bootstrap arena and never freed.
#pragma once

#include <malloc.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cstddef>
#include <cstdint>

namespace memrec::preload {

// Every function we forward to, as (symbol, member). Each member is typed by
// decltype of the libc declaration, so a wrong signature cannot compile.
#define MEMREC_FORWARDED(X)                 \
  X(malloc, malloc)                         \
  X(calloc, calloc)                         \
  X(realloc, realloc)                       \
  X(reallocarray, reallocarray)             \
  X(posix_memalign, posix_memalign)         \
  X(aligned_alloc, aligned_alloc)           \
  X(memalign, memalign)                     \
  X(valloc, valloc)                         \
  X(pvalloc, pvalloc)                       \
  X(malloc_usable_size, malloc_usable_size) \
  X(mmap, mmap)                             \
  X(munmap, munmap)                         \
  X(mremap, mremap)                         \
  X(_exit, exit_now)                        \
  X(_Exit, exit_now_c99)                    \
  X(execve, execve)                         \
  X(execv, execv)                           \
  X(execvp, execvp)                         \
  X(execvpe, execvpe)                       \
  X(close, close)                           \
  X(unshare, unshare)                       \
  X(setns, setns)                           \
  X(clone, clone)                           \
  X(free, free) /* last: hooks test it to know the table is filled */

struct RealAllocator {
#define MEMREC_MEMBER(symbol, member) decltype(&::symbol) member;
  MEMREC_FORWARDED(MEMREC_MEMBER)
#undef MEMREC_MEMBER
};

extern RealAllocator g_real;

// Fills g_real. Idempotent; the first call happens on the first hook.
// Calls made while it runs (dlsym's own) see `resolving_real_allocator()` and
// use the bootstrap arena.
[[gnu::cold]] void resolve_real_allocator();
bool resolving_real_allocator();

// The bootstrap arena for the allocations dlsym makes before g_real is filled.
void* bootstrap_alloc(std::size_t size, std::size_t alignment);
bool is_bootstrap(const void* p);
std::size_t bootstrap_size(const void* p);
std::uint64_t bootstrap_count();

}  // namespace memrec::preload
