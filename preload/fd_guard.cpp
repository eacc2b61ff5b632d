// The registry of the preload's own descriptors (see fd_guard.h); the hooks
// that protect them are in fd_hooks.cpp.
#include "fd_guard.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdint>

#include "decimal.h"

namespace memrec::preload {
namespace {

constexpr int kSlots = 8;
// -1: free. Stored before the descriptor is used, cleared after it is closed.
constinit std::atomic<int> g_fds[kSlots] = {-1, -1, -1, -1, -1, -1, -1, -1};
// Descriptors a fork child keeps (libunwind's pipe): one slot each.
constinit std::atomic<int> g_kept[2] = {-1, -1};
// Whether libunwind may open its pipe now: only while unwind_init() runs.
constinit std::atomic<bool> g_unwinder_pipe_allowed{false};

int raw_close(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }

// Set on the writer thread once it has a descriptor table of its own.
constinit __thread bool t_private_fds __attribute__((tls_model("initial-exec"))) = false;

}  // namespace

bool use_private_descriptors() {
  // With the whole range, the kernel copies none of the program's
  // descriptors into the new table (fs/file.c, __close_range): no moment in
  // which we would hold a pipe's write end the program closed.
  if (syscall(SYS_close_range, 0u, ~0u, CLOSE_RANGE_UNSHARE) != 0) return false;
  t_private_fds = true;
  // Something on 0, 1 and 2, so that nothing of ours gets a number a stray
  // write to stdout or stderr would reach.
  const int null_fd = static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | O_CLOEXEC));
  if (null_fd == 0) {
    syscall(SYS_dup3, 0, 1, O_CLOEXEC);
    syscall(SYS_dup3, 0, 2, O_CLOEXEC);
  }
  return true;
}

bool has_private_descriptors() { return t_private_fds; }

void share_private_descriptors(bool shared) { t_private_fds = shared; }

int borrow_program_fd(int fd, int reopen_flags) {
  // A pidfd of the process names its leader, whose table is the program's
  // (unless the leader left with pthread_exit: then nothing is borrowed).
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
  if (pidfd >= 0) {
    const int copy = static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
    raw_close(pidfd);
    if (copy >= 0) return copy;
  }
  // Where pidfd_getfd is refused (a container's seccomp profile without
  // CAP_SYS_PTRACE; kernels before 5.6), the same file opened anew through
  // the leader's table.
  char path[32] = "/proc/self/fd/";
  format_decimal(path + 14, sizeof(path) - 15, static_cast<std::uint64_t>(fd));
  return static_cast<int>(syscall(SYS_openat, AT_FDCWD, path, reopen_flags | O_CLOEXEC));
}

// A terminal, a pipe or a file: appended to when reopened, so the program's
// own output is never overwritten.
int borrow_program_stderr() { return borrow_program_fd(STDERR_FILENO, O_WRONLY | O_APPEND | O_NOCTTY); }

bool own(int fd) {
  for (auto& slot : g_fds) {
    int expected = -1;
    if (slot.compare_exchange_strong(expected, fd)) return true;
  }
  return false;
}

void disown(int fd) {
  for (auto& kept : g_kept) {
    int expected = fd;
    kept.compare_exchange_strong(expected, -1);
  }
  for (auto& slot : g_fds) {
    int expected = fd;
    if (slot.compare_exchange_strong(expected, -1)) return;
  }
}

namespace {

// Near the top of the descriptor limit, where programs rarely reach.
int high_floor() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 1000;
  const long floor = static_cast<long>(lim.rlim_cur) - 2 * kSlots;
  return floor > 10 ? static_cast<int>(floor > 100000 ? 100000 : floor) : 10;
}

}  // namespace

void allow_unwinder_pipe(bool allowed) { g_unwinder_pipe_allowed.store(allowed, std::memory_order_relaxed); }

int unwinder_pipe(int fds[2], int flags) {
  // Later, on a program thread, the pipe would take the lowest free numbers
  // for a moment: refused, libunwind finds every address it validates
  // invalid and ends that stack there (it reopens only a pipe it finds
  // closed, which the close hooks and a fork child's keeping it prevent).
  if (!g_unwinder_pipe_allowed.load(std::memory_order_relaxed)) {
    errno = EMFILE;
    return -1;
  }
  if (syscall(SYS_pipe2, fds, flags) != 0) return -1;
  for (int i = 0; i < 2; ++i) {
    const int moved = fcntl(fds[i], F_DUPFD_CLOEXEC, high_floor());
    if (moved >= 0) {  // else a limit too low for the floor: keep the low number, guarded
      raw_close(fds[i]);
      fds[i] = moved;
    }
    own(fds[i]);
    g_kept[i].store(fds[i], std::memory_order_relaxed);
  }
  return 0;
}

int guarded_open(const char* path, int flags, int mode, bool high) {
  const int fd = open(path, flags | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  // The program cannot see a private table: nothing to guard or move.
  if (t_private_fds) return fd;
  if (!own(fd)) {
    // Every slot busy cannot happen (we hold at most four); fail safe.
    raw_close(fd);
    errno = EMFILE;
    return -1;
  }
  if (!high) return fd;
  const int moved = fcntl(fd, F_DUPFD_CLOEXEC, high_floor());
  if (moved < 0 || !own(moved)) {
    if (moved >= 0) raw_close(moved);
    return fd;  // keep the low one: still guarded
  }
  raw_close(fd);
  disown(fd);
  return moved;
}

void guarded_close(int fd) {
  if (fd < 0) return;
  raw_close(fd);
  // The same number in the program's table may be guarded (libunwind's pipe).
  if (!t_private_fds) disown(fd);
}

long lowest_guarded_in(unsigned int first, unsigned int last) {
  long lowest = -1;
  for (const auto& slot : g_fds) {
    const int fd = slot.load(std::memory_order_relaxed);
    if (fd >= 0 && static_cast<unsigned int>(fd) >= first && static_cast<unsigned int>(fd) <= last &&
        (lowest < 0 || fd < lowest)) {
      lowest = fd;
    }
  }
  return lowest;
}

bool is_guarded(int fd) {
  for (const auto& slot : g_fds) {
    if (slot.load(std::memory_order_relaxed) == fd) return true;
  }
  return false;
}

void close_guarded_after_fork() {
  for (auto& slot : g_fds) {
    const int fd = slot.load(std::memory_order_relaxed);
    if (fd < 0 || fd == g_kept[0].load(std::memory_order_relaxed) || fd == g_kept[1].load(std::memory_order_relaxed)) {
      continue;
    }
    slot.store(-1, std::memory_order_relaxed);
    raw_close(fd);
  }
}

}  // namespace memrec::preload
