// Backtrace capture (see unwind.h). unw_backtrace uses libunwind's per-thread
// fast trace cache on x86-64, so a known frame costs a table lookup; unknown
// frames take its slow DWARF path, which may lock, once per return address.
#include "unwind.h"

#include <link.h>
#include <cstring>
#define UNW_LOCAL_ONLY
#include <libunwind.h>

namespace memrec::preload {
namespace {

struct Range {
  std::uintptr_t lo = 0;
  std::uintptr_t hi = 0;
  bool contains(std::uint64_t ip) const { return ip >= lo && ip < hi; }
};

Range g_self;
Range g_unwinder;

struct Find {
  std::uintptr_t addr;
  Range* out;
};

int find_module(dl_phdr_info* info, std::size_t, void* data) {
  auto* f = static_cast<Find*>(data);
  Range r{~std::uintptr_t{0}, 0};
  bool hit = false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
    const std::uintptr_t lo = info->dlpi_addr + ph.p_vaddr;
    const std::uintptr_t hi = lo + ph.p_memsz;
    if (lo < r.lo) r.lo = lo;
    if (hi > r.hi) r.hi = hi;
    if (f->addr >= lo && f->addr < hi) hit = true;
  }
  if (!hit) return 0;
  *f->out = r;
  return 1;
}

void locate(const void* addr, Range& out) {
  Find f{reinterpret_cast<std::uintptr_t>(addr), &out};
  dl_iterate_phdr(find_module, &f);
}

}  // namespace

bool in_unwinder(std::uintptr_t pc) { return g_unwinder.contains(pc); }

void unwind_init() {
  locate(reinterpret_cast<const void*>(&capture_backtrace), g_self);
  locate(reinterpret_cast<const void*>(&unw_backtrace), g_unwinder);
  // Per-thread caches: libunwind's global cache takes a lock on every lookup.
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
}

Backtrace capture_backtrace(std::uint64_t* ips, std::size_t max_depth) {
  void** raw = reinterpret_cast<void**>(ips);
  static_assert(sizeof(void*) == sizeof(std::uint64_t));
  const int got = unw_backtrace(raw, static_cast<int>(max_depth + 1 + kUnwindOwnFrames));
  if (got <= 0) return {0, false};
  std::size_t n = static_cast<std::size_t>(got);
  std::size_t skip = 0;
  while (skip < n && g_unwinder.contains(ips[skip])) ++skip;
  while (skip < n && g_self.contains(ips[skip])) ++skip;
  n -= skip;
  if (skip != 0) std::memmove(ips, ips + skip, n * sizeof(std::uint64_t));
  if (n > max_depth) return {max_depth, true};
  return {n, false};
}

}  // namespace memrec::preload
