// The interposed functions. Each forwards to the real one (g_real) and, while
// recording, records what it did. Allocations are stamped after the real call
// returns and frees before it runs, so the allocator's own synchronization
// orders a free on one thread before the malloc that reuses its address on
// another (FORMAT.md, "Order").
// We define both mmap and mmap64; meson's -D_FILE_OFFSET_BITS=64 would rename
// the declaration of mmap to mmap64 (off_t is 64 bits on LP64 either way).
#undef _FILE_OFFSET_BITS
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <cstdarg>
#include <cstring>

#include "hook_events.h"
#include "lifecycle.h"
#include "order_stamp.h"
#include "real_allocator.h"
#include "recorder.h"
#include "recorder_state.h"
#include "thread_state.h"

#define MEMREC_EXPORT __attribute__((visibility("default")))

namespace memrec::preload {
namespace {

using format::AllocFn;

// Before the real allocator is known: the first call resolves it; calls made
// by dlsym while it does are served from the bootstrap arena.
[[gnu::cold, gnu::noinline]] void* early_alloc(std::size_t size, std::size_t alignment) {
  if (resolving_real_allocator()) {
    count(format::Counter::kBootstrapAllocs);
    return bootstrap_alloc(size, alignment);
  }
  early_init();
  return nullptr;
}

// HOT PATH. The free stamp of a realloc, or 0 if nothing will be recorded.
inline std::uint64_t realloc_free_stamp() { return recording_frees() && !HookScope::active() ? order_stamp() : 0; }

// HOT PATH. What a realloc did, given the stamp taken before it.
[[gnu::always_inline]] inline void on_realloc(AllocFn fn, std::uint64_t free_ns, void* old_p, void* new_p,
                                              std::size_t size) {
  if (free_ns == 0) {
    if (HookScope::active() && recording_frees()) count_miss();
    return;
  }
  HookScope scope;
  if (new_p == nullptr) {
    // glibc's realloc(p, 0) frees p and returns NULL; any other NULL is a
    // failure that left p alone.
    if (size == 0) record_free_at(free_ns, old_p);
  } else if (recording_allocs()) {
    record_realloc(stack_here(), fn, free_ns, old_p, new_p, size);
  } else {
    record_free_at(free_ns, old_p);  // paused: the old block is gone, the new one is not ours
  }
}

// Moves a block dlsym got from the bootstrap arena into the real heap.
[[gnu::cold, gnu::noinline]] void* realloc_bootstrap(void* old_p, std::size_t size) {
  void* p = malloc(size);
  if (p != nullptr) {
    const std::size_t old_size = bootstrap_size(old_p);
    std::memcpy(p, old_p, old_size < size ? old_size : size);
  }
  return p;
}

inline bool ready() { return g_real.free != nullptr; }

// Runs `exec` (the real exec call) with the dump brought up to it; an exec
// that returns failed, and the program sees its errno unchanged.
template <typename Exec>
int exec_noted(const char* path, Exec&& exec) {
  if (!ready()) early_init();
  const bool noted = sync_before_exec(path);
  const int result = exec();
  if (noted) {
    const int error = errno;
    note_exec_failed(error);
    errno = error;
  }
  return result;
}

}  // namespace
}  // namespace memrec::preload

using namespace memrec::preload;
using memrec::format::AllocFn;

extern "C" {

MEMREC_EXPORT void* malloc(size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, 16)) return p;
  }
  void* p = g_real.malloc(size);
  on_alloc(AllocFn::kMalloc, p, size);
  return p;
}

MEMREC_EXPORT void* calloc(size_t n, size_t size) {
  if (!ready()) [[unlikely]] {
    size_t total = 0;
    if (__builtin_mul_overflow(n, size, &total)) return nullptr;
    if (void* p = early_alloc(total, 16)) return p;  // the arena is zeroed and never reused
  }
  void* p = g_real.calloc(n, size);
  on_alloc(AllocFn::kCalloc, p, n * size);
  return p;
}

// HOT PATH. Records *before* releasing: once the real free returns, another
// thread may get `ptr` back from malloc, and that allocation must sort after us.
MEMREC_EXPORT void free(void* ptr) {
  if (ptr == nullptr) return;
  if (is_bootstrap(ptr)) [[unlikely]]
    return;
  if (!ready()) [[unlikely]]
    early_init();
  on_free(ptr);
  g_real.free(ptr);
}

MEMREC_EXPORT void* realloc(void* old_p, size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, 16)) {
      if (old_p != nullptr) std::memcpy(p, old_p, bootstrap_size(old_p) < size ? bootstrap_size(old_p) : size);
      return p;
    }
  }
  if (is_bootstrap(old_p)) [[unlikely]]
    return realloc_bootstrap(old_p, size);
  if (old_p == nullptr) {
    void* p = g_real.realloc(nullptr, size);
    on_alloc(AllocFn::kRealloc, p, size);
    return p;
  }
  const std::uint64_t free_ns = realloc_free_stamp();
  void* p = g_real.realloc(old_p, size);
  on_realloc(AllocFn::kRealloc, free_ns, old_p, p, size);
  return p;
}

MEMREC_EXPORT void* reallocarray(void* old_p, size_t n, size_t size) {
  size_t total = 0;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (!ready() || is_bootstrap(old_p)) [[unlikely]]
    return realloc(old_p, total);
  if (old_p == nullptr) {
    void* p;
    {
      // glibc's reallocarray calls realloc; that inner call is this one.
      HookScope inner(HookDepth::kInternal);
      p = g_real.reallocarray(nullptr, n, size);
    }
    on_alloc(AllocFn::kReallocArray, p, total);
    return p;
  }
  const std::uint64_t free_ns = realloc_free_stamp();
  void* p;
  {
    HookScope inner(HookDepth::kInternal);
    p = g_real.reallocarray(old_p, n, size);
  }
  on_realloc(AllocFn::kReallocArray, free_ns, old_p, p, total);
  return p;
}

MEMREC_EXPORT int posix_memalign(void** out, size_t alignment, size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, alignment)) {
      *out = p;
      return 0;
    }
  }
  int r;
  {
    HookScope inner(HookDepth::kInternal);
    r = g_real.posix_memalign(out, alignment, size);
  }
  if (r == 0) on_alloc(AllocFn::kPosixMemalign, *out, size);
  return r;
}

MEMREC_EXPORT void* aligned_alloc(size_t alignment, size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, alignment)) return p;
  }
  void* p;
  {
    HookScope inner(HookDepth::kInternal);
    p = g_real.aligned_alloc(alignment, size);
  }
  on_alloc(AllocFn::kAlignedAlloc, p, size);
  return p;
}

MEMREC_EXPORT void* memalign(size_t alignment, size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, alignment)) return p;
  }
  void* p;
  {
    HookScope inner(HookDepth::kInternal);
    p = g_real.memalign(alignment, size);
  }
  on_alloc(AllocFn::kMemalign, p, size);
  return p;
}

MEMREC_EXPORT void* valloc(size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, 4096)) return p;
  }
  void* p;
  {
    HookScope inner(HookDepth::kInternal);
    p = g_real.valloc(size);
  }
  on_alloc(AllocFn::kValloc, p, size);
  return p;
}

MEMREC_EXPORT void* pvalloc(size_t size) {
  if (!ready()) [[unlikely]] {
    if (void* p = early_alloc(size, 4096)) return p;
  }
  void* p;
  {
    HookScope inner(HookDepth::kInternal);
    p = g_real.pvalloc(size);
  }
  on_alloc(AllocFn::kPvalloc, p, size);
  return p;
}

MEMREC_EXPORT size_t malloc_usable_size(void* p) {
  if (p == nullptr) return 0;
  if (is_bootstrap(p)) return bootstrap_size(p);
  if (!ready()) early_init();
  return g_real.malloc_usable_size != nullptr ? g_real.malloc_usable_size(p) : 0;
}

MEMREC_EXPORT void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t offset) {
  if (g_real.mmap == nullptr) [[unlikely]] {
    return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, offset));
  }
  void* p = g_real.mmap(addr, len, prot, flags, fd, offset);
  // Nested calls are libunwind's own memory, not the program's: not a miss.
  if (p != MAP_FAILED && (flags & MAP_ANONYMOUS) != 0 && recording_allocs() && !HookScope::active()) {
    HookScope scope;
    record_mmap(stack_here(), p, len, prot, flags);
  }
  return p;
}

MEMREC_EXPORT void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, len, prot, flags, fd, offset);
}

MEMREC_EXPORT int munmap(void* addr, size_t len) {
  if (g_real.munmap == nullptr) [[unlikely]]
    return static_cast<int>(syscall(SYS_munmap, addr, len));
  if (recording_frees() && !HookScope::active()) {
    HookScope scope;
    record_munmap(addr, len);
  }
  return g_real.munmap(addr, len);
}

MEMREC_EXPORT void* mremap(void* old_p, size_t old_size, size_t new_size, int flags, ...) {
  void* wanted = nullptr;
  if ((flags & MREMAP_FIXED) != 0) {
    va_list ap;
    va_start(ap, flags);
    wanted = va_arg(ap, void*);
    va_end(ap);
  }
  if (g_real.mremap == nullptr) [[unlikely]] {
    return reinterpret_cast<void*>(syscall(SYS_mremap, old_p, old_size, new_size, flags, wanted));
  }
  const std::uint64_t free_ns = recording_frees() && !HookScope::active() ? order_stamp() : 0;
  void* p = g_real.mremap(old_p, old_size, new_size, flags, wanted);
  if (p != MAP_FAILED && free_ns != 0) {
    HookScope scope;
    if (recording_allocs()) {
      record_mremap(stack_here(), free_ns, old_p, old_size, p, new_size);
    } else {
      record_munmap(old_p, old_size);
    }
  }
  return p;
}

MEMREC_EXPORT void _exit(int status) {
  finish_before_exit();
  if (g_real.exit_now != nullptr) g_real.exit_now(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

MEMREC_EXPORT void _Exit(int status) {
  finish_before_exit();
  if (g_real.exit_now_c99 != nullptr) g_real.exit_now_c99(status);
  syscall(SYS_exit_group, status);
  __builtin_unreachable();
}

// exec replaces the image without running destructors: write what we have,
// ending with an Exec record. If exec fails, the dump notes it and recording
// goes on (FORMAT.md, "Exec").
MEMREC_EXPORT int execve(const char* path, char* const argv[], char* const envp[]) {
  return exec_noted(path, [&] { return g_real.execve(path, argv, envp); });
}

MEMREC_EXPORT int execv(const char* path, char* const argv[]) {
  return exec_noted(path, [&] { return g_real.execv(path, argv); });
}

MEMREC_EXPORT int execvp(const char* file, char* const argv[]) {
  return exec_noted(file, [&] { return g_real.execvp(file, argv); });
}

MEMREC_EXPORT int execvpe(const char* file, char* const argv[], char* const envp[]) {
  return exec_noted(file, [&] { return g_real.execvpe(file, argv, envp); });
}

}  // extern "C"

namespace {

// The execl family takes its arguments as varargs; glibc turns them into an
// array and calls execve internally (not through our symbol), so gather them
// here and go through the array forms above.
constexpr int kMaxExecArgs = 4096;

int collect_args(const char* first, va_list ap, const char** argv) {
  int n = 0;
  argv[n++] = first;
  while (argv[n - 1] != nullptr) {
    if (n == kMaxExecArgs) {
      errno = E2BIG;
      return -1;
    }
    argv[n++] = va_arg(ap, const char*);
  }
  return n;
}

}  // namespace

extern "C" {

MEMREC_EXPORT int execl(const char* path, const char* arg, ...) {
  const char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  const int n = collect_args(arg, ap, argv);
  va_end(ap);
  return n < 0 ? -1 : execv(path, const_cast<char* const*>(argv));
}

MEMREC_EXPORT int execlp(const char* file, const char* arg, ...) {
  const char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  const int n = collect_args(arg, ap, argv);
  va_end(ap);
  return n < 0 ? -1 : execvp(file, const_cast<char* const*>(argv));
}

MEMREC_EXPORT int execle(const char* path, const char* arg, ...) {
  const char* argv[kMaxExecArgs];
  va_list ap;
  va_start(ap, arg);
  const int n = collect_args(arg, ap, argv);
  char* const* envp = n < 0 ? nullptr : va_arg(ap, char* const*);
  va_end(ap);
  return n < 0 ? -1 : execve(path, const_cast<char* const*>(argv), envp);
}

}  // extern "C"
