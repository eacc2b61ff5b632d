// MEMREC_OUTPUT template expansion and exclusive creation (see output_file.h).
#include "output_file.h"

#include "decimal.h"
#include "fd_guard.h"

#include <errno.h>  // program_invocation_short_name (_GNU_SOURCE)
#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string_view>

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

}  // namespace memrec::preload
