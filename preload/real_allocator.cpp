// Resolution of the next allocator in the chain, and the bootstrap arena that
// serves dlsym's own allocations while we resolve it.
#include "real_allocator.h"

#include <dlfcn.h>
#include <atomic>
#include <cstring>

#include "log.h"
#include "thread_state.h"

namespace memrec::preload {

constinit RealAllocator g_real;

namespace {

// 256 KiB is far more than dlsym needs (a few hundred bytes for its error
// state); the rest covers allocations that libraries make in their own
// constructors before ours if resolution fails part-way.
constexpr std::size_t kBootstrapBytes = 256 << 10;
constexpr std::size_t kHeader = 16;  // keeps 16-byte alignment and stores the size
alignas(64) unsigned char g_bootstrap[kBootstrapBytes];
std::atomic<std::size_t> g_bootstrap_used{0};
std::atomic<std::uint64_t> g_bootstrap_count{0};
std::atomic<bool> g_resolving{false};

template <typename Fn>
void resolve(Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

}  // namespace

void* bootstrap_alloc(std::size_t size, std::size_t alignment) {
  if (alignment < kHeader) alignment = kHeader;
  std::size_t used = g_bootstrap_used.load(std::memory_order_relaxed);
  for (;;) {
    const auto base = reinterpret_cast<std::uintptr_t>(g_bootstrap);
    std::uintptr_t user = (base + used + kHeader + alignment - 1) & ~(alignment - 1);
    const std::size_t end = user - base + size;
    if (end > kBootstrapBytes || size > kBootstrapBytes) return nullptr;
    if (g_bootstrap_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
      std::memcpy(reinterpret_cast<void*>(user - kHeader), &size, sizeof(size));
      g_bootstrap_count.fetch_add(1, std::memory_order_relaxed);
      return reinterpret_cast<void*>(user);
    }
  }
}

bool is_bootstrap(const void* p) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const auto base = reinterpret_cast<std::uintptr_t>(g_bootstrap);
  return a >= base && a < base + kBootstrapBytes;
}

std::size_t bootstrap_size(const void* p) {
  std::size_t size = 0;
  std::memcpy(&size, static_cast<const unsigned char*>(p) - kHeader, sizeof(size));
  return size;
}

std::uint64_t bootstrap_count() { return g_bootstrap_count.load(std::memory_order_relaxed); }

bool resolving_real_allocator() { return g_resolving.load(std::memory_order_relaxed); }

void resolve_real_allocator() {
  if (g_real.free != nullptr || g_resolving.exchange(true)) return;
  HookScope scope(HookDepth::kInternal);
  RealAllocator r{};
#define MEMREC_RESOLVE(symbol, member) resolve(r.member, #symbol);
  MEMREC_FORWARDED(MEMREC_RESOLVE)
#undef MEMREC_RESOLVE
  if (r.malloc == nullptr || r.free == nullptr || r.calloc == nullptr || r.realloc == nullptr) {
    // Without a next allocator there is nothing to forward to; this cannot
    // happen with glibc, whose malloc is always later in the lookup order.
    log_line({"cannot find the next malloc/free after libmemrec.so (dlsym RTLD_NEXT failed)"});
    r.exit_now != nullptr ? r.exit_now(127) : abort();
  }
  // Publish the table with `free` last: hooks test `free` to know it is filled.
  g_real = r;
  std::atomic_thread_fence(std::memory_order_release);
  g_resolving.store(false, std::memory_order_relaxed);
}

}  // namespace memrec::preload
