// The registry of the preload's own descriptors (see fd_guard.h); the hooks
// that protect them are in fd_hooks.cpp.
#include "fd_guard.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <cstdint>

namespace memrec::preload {
namespace {

constexpr int kSlots = 8;
// -1: free. Stored before the descriptor is used, cleared after it is closed.
constinit std::atomic<int> g_fds[kSlots] = {-1, -1, -1, -1, -1, -1, -1, -1};

int raw_close(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }

}  // namespace

bool own(int fd) {
  for (auto& slot : g_fds) {
    int expected = -1;
    if (slot.compare_exchange_strong(expected, fd)) return true;
  }
  return false;
}

void disown(int fd) {
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

int guarded_open(const char* path, int flags, int mode, bool high) {
  const int fd = open(path, flags | O_CLOEXEC, mode);
  if (fd < 0) return -1;
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
  disown(fd);
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
    const int fd = slot.exchange(-1);
    if (fd >= 0) raw_close(fd);
  }
}

}  // namespace memrec::preload
