// The writer's /proc reads (see proc_sampler.h).
#include "proc_sampler.h"

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "decimal.h"
#include "fd_guard.h"
#include "options.h"

namespace memrec::preload {

constinit ProcSampler g_proc;

namespace {

// Reads the whole of a /proc file kept open in `fd` (opened on first use)
// into `buf`, NUL-terminated: false if it could not be read.
template <std::size_t N>
bool read_kept(int& fd, const char* path, char (&buf)[N]) {
  if (fd < 0) fd = guarded_open(path, O_RDONLY, 0, /*high=*/true);
  const ssize_t n = fd >= 0 ? pread(fd, buf, N - 1, 0) : -1;
  if (n <= 0) return false;
  buf[n] = '\0';
  return true;
}

}  // namespace

bool ProcSampler::sample_rss(std::uint64_t now, std::uint64_t& rss) {
  if (g_options.rss_interval_ms == 0 || now - last_rss_ns_ < g_options.rss_interval_ms * 1000000ull) return false;
  last_rss_ns_ = now;
  char buf[128];
  if (!read_kept(statm_fd_, "/proc/self/statm", buf)) return false;
  // statm: size resident shared text lib data dt, in pages.
  const char* p = buf;
  while (*p != ' ' && *p != '\0') ++p;
  std::uint64_t pages = 0;
  for (++p; *p >= '0' && *p <= '9'; ++p) pages = pages * 10 + static_cast<std::uint64_t>(*p - '0');
  rss = pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  return true;
}

bool ProcSampler::names_due(std::uint64_t now) {
  constexpr std::uint64_t kNamePollNs = 1000000000;
  if (now - last_names_ns_ < kNamePollNs) return false;
  last_names_ns_ = now;
  return true;
}

bool ProcSampler::only_writer_left(std::uint64_t now, std::uint32_t writers) {
  constexpr std::uint64_t kCheckEveryNs = 50'000'000;
  if (now - last_alone_check_ns_ < kCheckEveryNs) return false;
  last_alone_check_ns_ = now;
  char buf[1024];
  if (!read_kept(stat_fd_, "/proc/self/stat", buf)) return false;
  // The command name may hold spaces and parentheses: fields start after the
  // last ')': state first, num_threads 18th (proc(5), fields 3 and 20). A
  // main thread that left with pthread_exit() is a zombie still counted.
  const char* p = std::strrchr(buf, ')');
  if (p == nullptr || p[1] != ' ') return false;
  const char state = p[2];
  for (int field = 0; field < 18; ++field) {
    while (*p != '\0' && *p != ' ') ++p;
    while (*p == ' ') ++p;
  }
  const long threads = std::strtol(p, nullptr, 10);
  const long ours = writers;
  return threads == ours || (threads == ours + 1 && state == 'Z');
}

void ProcSampler::close() {
  guarded_close(statm_fd_);
  guarded_close(stat_fd_);
  statm_fd_ = stat_fd_ = -1;
}

std::size_t read_thread_name(std::uint64_t tid, char (&name)[17]) {
  char path[64] = "/proc/self/task/";
  std::size_t pos = std::strlen(path);
  pos += format_decimal(path + pos, 24, tid);
  std::memcpy(path + pos, "/comm", 6);
  const int fd = guarded_open(path, O_RDONLY, 0, /*high=*/false);
  if (fd < 0) return 0;
  std::memset(name, 0, sizeof(name));
  const ssize_t got = read(fd, name, 16);
  guarded_close(fd);
  if (got <= 0) return 0;
  std::size_t len = static_cast<std::size_t>(got);
  if (name[len - 1] == '\n') name[--len] = '\0';
  return len;
}

bool thread_gone(std::uint64_t pid, std::uint64_t tid) {
  return syscall(SYS_tgkill, static_cast<long>(pid), static_cast<long>(tid), 0) == -1 && errno == ESRCH;
}

std::size_t read_cmdline(std::byte* buf, std::size_t cap) {
  const int fd = guarded_open("/proc/self/cmdline", O_RDONLY, 0, /*high=*/false);
  if (fd < 0) return 0;
  std::size_t total = 0;
  for (;;) {
    const ssize_t n = read(fd, buf + total, cap - total);
    if (n <= 0) break;
    total += static_cast<std::size_t>(n);
    if (total == cap) break;
  }
  guarded_close(fd);
  // /proc ends each argument with a NUL; keep separators only between them.
  if (total > 0 && buf[total - 1] == std::byte{0}) --total;
  return total;
}

}  // namespace memrec::preload
