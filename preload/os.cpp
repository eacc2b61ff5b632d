// Raw-syscall helpers for the preload's own memory and waits (see os.h).
#include "os.h"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <climits>
#include <ctime>

namespace memrec::preload::os {

void* map(std::size_t bytes, bool noreserve) {
  const int flags = MAP_PRIVATE | MAP_ANONYMOUS | (noreserve ? MAP_NORESERVE : 0);
  const long r = syscall(SYS_mmap, nullptr, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  return r == -1 ? nullptr : reinterpret_cast<void*>(r);
}

void unmap(void* p, std::size_t bytes) {
  if (p != nullptr) syscall(SYS_munmap, p, bytes);
}

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint64_t timeout_ns) {
  timespec ts{static_cast<time_t>(timeout_ns / 1000000000u), static_cast<long>(timeout_ns % 1000000000u)};
  // std::atomic<uint32_t> has the layout of a uint32_t (the futex word).
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected,
          timeout_ns != 0 ? &ts : nullptr, nullptr, 0);
}

void futex_wake_all(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr, 0);
}

std::uint64_t gettid() { return static_cast<std::uint64_t>(syscall(SYS_gettid)); }

}  // namespace memrec::preload::os
