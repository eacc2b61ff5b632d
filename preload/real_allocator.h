// The allocator we forward to: the next definition after us in the lookup
// order (dlsym RTLD_NEXT), so a program linked against jemalloc or tcmalloc
// keeps it. dlsym itself allocates; until the table is filled those calls are
// served from a static bootstrap arena and never freed.
#pragma once

#include <malloc.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cstddef>
#include <cstdint>

namespace memrec::preload {

struct RealAllocator {
  decltype(&::malloc) malloc;
  decltype(&::calloc) calloc;
  decltype(&::realloc) realloc;
  decltype(&::reallocarray) reallocarray;
  decltype(&::free) free;
  decltype(&::posix_memalign) posix_memalign;
  decltype(&::aligned_alloc) aligned_alloc;
  decltype(&::memalign) memalign;
  decltype(&::valloc) valloc;
  decltype(&::pvalloc) pvalloc;
  decltype(&::malloc_usable_size) malloc_usable_size;
  decltype(&::mmap) mmap;
  decltype(&::munmap) munmap;
  decltype(&::mremap) mremap;
  decltype(&::_exit) exit_now;
  decltype(&::_Exit) exit_now_c99;
  decltype(&::execve) execve;
  decltype(&::execv) execv;
  decltype(&::execvp) execvp;
  decltype(&::execvpe) execvpe;
  decltype(&::close) close;
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
