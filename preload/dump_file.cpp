// The dump file (see dump_file.h): MEMREC_OUTPUT template expansion and
// exclusive creation, the header, appending frames.
#include "dump_file.h"

#include <errno.h>  // program_invocation_short_name (_GNU_SOURCE)
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <string_view>

#include "decimal.h"
#include "fd_guard.h"
#include "log.h"
#include "memrec/format/file_header.h"
#include "options.h"
#include "os.h"
#include "proc_sampler.h"

namespace memrec::preload {
namespace {

struct Out {
  char* buf;
  std::size_t cap;
  std::size_t pos = 0;
  bool ok = true;

  void text(std::string_view s) {
    if (pos + s.size() >= cap) {
      ok = false;
      return;
    }
    std::memcpy(buf + pos, s.data(), s.size());
    pos += s.size();
  }
  void number(std::uint64_t v) {
    char digits[20];
    text(std::string_view(digits, format_decimal(digits, sizeof(digits), v)));
  }
};

// %e: the name the program was invoked as, argv[0]'s last element as glibc
// keeps it (program_invocation_short_name), so a tool reached through a
// symlink (redis-server -> redis-check-rdb) names its dump as the user called
// it; /proc/self/exe's name when that is empty. Taken at the image's first
// dump and kept for its fork children: a server may rewrite its argv for ps
// once started (PostgreSQL's "postgres: checkpointer").
char g_exe_name[256];
std::size_t g_exe_name_len = 0;

std::string_view exe_name() {
  if (g_exe_name_len != 0) return std::string_view(g_exe_name, g_exe_name_len);
  std::string_view name = program_invocation_short_name != nullptr ? program_invocation_short_name : "";
  char link[4096];
  if (name.empty()) {
    const ssize_t n = readlink("/proc/self/exe", link, sizeof(link) - 1);
    if (n > 0) name = std::string_view(link, static_cast<std::size_t>(n));
    const std::size_t slash = name.rfind('/');
    // remove_prefix, not substr: substr can throw, and the preload has no exceptions.
    if (slash != std::string_view::npos) name.remove_prefix(slash + 1);
  }
  if (name.empty()) name = "unknown";
  g_exe_name_len = name.size() < sizeof(g_exe_name) ? name.size() : sizeof(g_exe_name) - 1;
  std::memcpy(g_exe_name, name.data(), g_exe_name_len);
  return std::string_view(g_exe_name, g_exe_name_len);
}

// Expands the template; `counter` < 0 means "no %n in the template".
bool expand(const char* tmpl, std::uint64_t pid, std::uint64_t start_s, std::string_view exe, std::uint64_t counter,
            std::uint64_t suffix, char* path, std::size_t cap) {
  Out out{path, cap};
  for (const char* p = tmpl; *p != '\0'; ++p) {
    if (*p != '%' || p[1] == '\0') {
      out.text(std::string_view(p, 1));
      continue;
    }
    switch (*++p) {
      case 'p':
        out.number(pid);
        break;
      case 'e':
        out.text(exe);
        break;
      case 't':
        out.number(start_s);
        break;
      case 'n':
        out.number(counter);
        break;
      case '%':
        out.text("%");
        break;
      default:
        out.text(std::string_view(p - 1, 2));
        break;
    }
  }
  if (suffix != 0) {
    // "memrec.app.12.dat" becomes "memrec.app.12.1.dat".
    std::string_view whole(path, out.pos);
    const std::size_t slash = whole.rfind('/');
    const std::size_t dot = whole.rfind('.');
    const bool has_ext = dot != std::string_view::npos && (slash == std::string_view::npos || dot > slash + 1);
    char ext[64] = {};
    std::size_t ext_len = 0;
    if (has_ext && whole.size() - dot < sizeof(ext)) {
      ext_len = whole.size() - dot;
      std::memcpy(ext, path + dot, ext_len);
      out.pos = dot;
    }
    out.text(".");
    out.number(suffix);
    out.text(std::string_view(ext, ext_len));
  }
  if (!out.ok) return false;
  path[out.pos] = '\0';
  return true;
}

}  // namespace

int create_output(const char* tmpl, std::uint64_t pid, std::uint64_t start_s, char* path, std::size_t cap) {
  const std::string_view exe = exe_name();
  const bool has_counter = std::strstr(tmpl, "%n") != nullptr;
  for (std::uint64_t attempt = 0; attempt < 10000; ++attempt) {
    const std::uint64_t counter = has_counter ? attempt : 0;
    const std::uint64_t suffix = has_counter ? 0 : attempt;
    if (!expand(tmpl, pid, start_s, exe, counter, suffix, path, cap)) {
      errno = ENAMETOOLONG;
      return -1;
    }
    const int fd = guarded_open(path, O_WRONLY | O_CREAT | O_EXCL, 0600, /*high=*/true);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

constinit DumpFile g_dump;

namespace {
constexpr std::size_t kCmdlineBytes = 64 << 10;
}  // namespace

bool DumpFile::setup() {
  if (cmdline_ == nullptr) cmdline_ = static_cast<std::byte*>(os::map(kCmdlineBytes));
  return cmdline_ != nullptr;
}

void DumpFile::fail(std::string_view what, int err) {
  if (failed_.exchange(true, std::memory_order_relaxed)) return;
  log_line({what, path_, ": ", errno_text(err), "; recording stopped, the program goes on"});
}

bool DumpFile::write_all(int fd, const std::byte* data, std::size_t size, std::string_view what) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(what, errno);
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

// A write past `ulimit -f` raises SIGXFSZ, whose default action would kill
// the program instead of the write failing with EFBIG. The writer thread,
// where this runs, blocks every signal; the header was once written from the
// program's thread, and this stays safe there: block SIGXFSZ for the write
// and take back the one it raised.
bool DumpFile::write_header(int fd, const std::byte* data, std::size_t size) {
  sigset_t xfsz;
  sigset_t old;
  sigset_t pending;
  sigemptyset(&xfsz);
  sigaddset(&xfsz, SIGXFSZ);
  pthread_sigmask(SIG_BLOCK, &xfsz, &old);
  const bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
  const bool ok = write_all(fd, data, size, "no dump: cannot write the header of ");
  if (!ok && !was_pending) {
    const timespec no_wait{0, 0};
    sigtimedwait(&xfsz, nullptr, &no_wait);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return ok;
}

// Makes the path absolute, so a chdir() of the program does not lose it.
bool DumpFile::make_path_absolute() {
  if (path_[0] == '/') return true;
  char cwd[sizeof(path_)];
  if (getcwd(cwd, sizeof(cwd)) == nullptr) return false;
  const std::size_t cwd_len = std::strlen(cwd);
  const std::size_t path_len = std::strlen(path_);
  if (cwd_len + 1 + path_len + 1 > sizeof(path_)) return false;
  std::memmove(path_ + cwd_len + 1, path_, path_len + 1);
  std::memcpy(path_, cwd, cwd_len);
  path_[cwd_len] = '/';
  return true;
}

bool DumpFile::open(std::span<std::byte> scratch) {
  if (opened_) return !failed_;
  opened_ = true;
  const int fd =
      create_output(g_options.output, origin_.pid, origin_.start_wall_ns / 1000000000u, path_, sizeof(path_));
  if (fd < 0) {
    fail("cannot create ", errno);
    return false;
  }
  make_path_absolute();  // only for messages: a failure leaves the name as it was
  fd_ = fd;
  struct stat st {};
  if (fstat(fd, &st) == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  }
  char exe[4096];
  const ssize_t exe_len = readlink("/proc/self/exe", exe, sizeof(exe));
  OptionText options;
  describe_options(options);
  const std::size_t cmdline_len = read_cmdline(cmdline_, kCmdlineBytes);
  format::FileHeaderFields h;
  h.pid = origin_.pid;
  h.ppid = origin_.ppid;
  h.start_wall_ns = origin_.start_wall_ns;
  h.start_mono_ns = origin_.start_mono_ns;
  h.page_size = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  h.exe_path = std::string_view(exe, exe_len > 0 ? static_cast<std::size_t>(exe_len) : 0);
  h.cmdline = std::span<const std::byte>(cmdline_, cmdline_len);
  h.options = std::span<const format::OptionPair>(options.pairs, options.count);
  format::ByteWriter w(scratch);
  if (!format::encode_file_header(w, h)) {
    fail("cannot encode the header of ", EOVERFLOW);
    return false;
  }
  // A header cut short (a full disk, `ulimit -f`) is a file nobody can read:
  // remove it rather than leave it behind. O_EXCL made it ours.
  if (!write_header(fd, w.written().data(), w.size())) {
    unlink(path_);
    guarded_close(fd);
    fd_ = -1;
    return false;
  }
  end_.store(w.size(), std::memory_order_relaxed);
  return true;
}

int DumpFile::reopen(bool high) const {
  // Not O_APPEND: frames are placed with pwrite(), which Linux ignores the
  // offset of on a descriptor opened for appending (pwrite(2), BUGS).
  const int fd = guarded_open(path_, O_WRONLY, 0, high);
  struct stat st {};
  if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_)) {
    guarded_close(fd);
    errno = ENOENT;
    return -1;
  }
  return fd;
}

// A dump deleted while we write would lose everything silently: say so and
// stop instead. Several writers append at once (FORMAT.md, "Frames of
// several writers"): each frame's place is reserved by one atomic add, then
// written whole there; a writer stopped in between leaves zeros the reader
// skips.
bool DumpFile::append(const std::byte* data, std::size_t size) {
  struct stat st {};
  if (fstat(fd_, &st) == 0 && st.st_nlink == 0) {
    fail("the dump was deleted: ", ENOENT);
    return false;
  }
  auto at = static_cast<off_t>(end_.fetch_add(size, std::memory_order_relaxed));
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, data, size, at);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot write ", errno);
      return false;
    }
    data += n;
    at += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

void DumpFile::close() {
  guarded_close(fd_);
  fd_ = -1;
}

void DumpFile::reset_after_fork() {
  fd_ = -1;
  dev_ = ino_ = 0;
  opened_ = false;
  failed_.store(false, std::memory_order_relaxed);
  end_.store(0, std::memory_order_relaxed);
  path_[0] = '\0';
  origin_ = DumpOrigin{};
}

}  // namespace memrec::preload
