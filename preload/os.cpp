// Raw-syscall helpers for the preload's own memory and waits (see os.h).
#include "os.h"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include <cerrno>
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

// One process_vm_readv of a byte per page on our own process: the kernel
// stops at the first page it cannot read, without a signal ("partial
// transfers apply at the granularity of iovec elements", process_vm_readv(2)),
// and a thread of the process may always read it (ptrace access mode checks
// pass within a thread group).
long readable_pages(std::uintptr_t first, std::size_t n, std::uintptr_t page_bytes) {
  constexpr std::size_t kBatch = 64;
  iovec remote[kBatch];
  char sink[kBatch];
  const long pid = syscall(SYS_getpid);
  std::size_t done = 0;
  while (done < n) {
    const std::size_t k = n - done < kBatch ? n - done : kBatch;
    for (std::size_t i = 0; i < k; ++i) {
      remote[i] = iovec{reinterpret_cast<void*>(first + (done + i) * page_bytes), 1};
    }
    iovec local{sink, k};
    const long got = syscall(SYS_process_vm_readv, pid, &local, 1ul, remote, k, 0ul);
    if (got < 0) return errno == EFAULT ? static_cast<long>(done) : -1;  // EFAULT: the first page
    done += static_cast<std::size_t>(got);
    if (static_cast<std::size_t>(got) < k) break;
  }
  return static_cast<long>(done);
}

}  // namespace memrec::preload::os
