// close(), close_range(), pipe() and pipe2(): the hooks that keep the
// descriptors of fd_guard.h ours while a program closes what it did not open.
#include <sys/syscall.h>
#include <unistd.h>
#include <cstdint>

#include "fd_guard.h"
#include "real_allocator.h"
#include "unwind.h"

#define MEMREC_EXPORT __attribute__((visibility("default")))

using memrec::preload::is_guarded;

extern "C" {

// A program closing one of our descriptors is told it succeeded; the number
// stays ours, so its next open() cannot receive it. libunwind closes its own.
MEMREC_EXPORT int close(int fd) {
  if (fd >= 0 && is_guarded(fd)) {
    if (!memrec::preload::in_unwinder(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)))) return 0;
    memrec::preload::disown(fd);
  }
  if (memrec::preload::g_real.close != nullptr) return memrec::preload::g_real.close(fd);
  return static_cast<int>(syscall(SYS_close, fd));
}

// libunwind validates addresses by writing them to a pipe it opens lazily
// (libunwind 1.6, x86_64/Ginit.c) and reopens when a write fails with EBADF,
// closing the old numbers first: if a daemon closed that pipe and reused the
// numbers, libunwind would close the daemon's files. Its pipe is ours to guard.
MEMREC_EXPORT int pipe2(int fds[2], int flags) {
  const int r = static_cast<int>(syscall(SYS_pipe2, fds, flags));
  if (r == 0 && memrec::preload::in_unwinder(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)))) {
    memrec::preload::own(fds[0], /*survives_fork=*/true);
    memrec::preload::own(fds[1], /*survives_fork=*/true);
  }
  return r;
}

MEMREC_EXPORT int pipe(int fds[2]) {
  const int r = static_cast<int>(syscall(SYS_pipe2, fds, 0));
  if (r == 0 && memrec::preload::in_unwinder(reinterpret_cast<std::uintptr_t>(__builtin_return_address(0)))) {
    memrec::preload::own(fds[0], /*survives_fork=*/true);
    memrec::preload::own(fds[1], /*survives_fork=*/true);
  }
  return r;
}

MEMREC_EXPORT int close_range(unsigned int first, unsigned int last, int flags) {
  // Close the range in pieces around our descriptors.
  unsigned int from = first;
  for (;;) {
    const long guarded = memrec::preload::lowest_guarded_in(from, last);
    if (guarded < 0) return static_cast<int>(syscall(SYS_close_range, from, last, flags));
    const auto g = static_cast<unsigned int>(guarded);
    if (g > from && syscall(SYS_close_range, from, g - 1, flags) != 0) return -1;
    if (g == last) return 0;
    from = g + 1;
  }
}

}  // extern "C"
