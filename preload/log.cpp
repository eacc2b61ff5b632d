// Allocation-free logging for the preload (see log.h).
#include "log.h"

#include "decimal.h"
#include "fd_guard.h"

#include <sys/syscall.h>
#include <unistd.h>
#include <atomic>
#include <cstring>
#include <initializer_list>

namespace memrec::preload {
namespace {

constexpr int kMaxLines = 20;
std::atomic<int> g_lines{0};

std::size_t append(char* buf, std::size_t pos, std::size_t cap, std::string_view s) {
  const std::size_t n = s.size() < cap - pos ? s.size() : cap - pos;
  std::memcpy(buf + pos, s.data(), n);
  return pos + n;
}

std::size_t append_number(char* buf, std::size_t pos, std::size_t cap, std::int64_t v) {
  if (v < 0 && pos < cap) buf[pos++] = '-';
  const std::uint64_t magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  return pos + format_decimal(buf + pos, cap - pos, magnitude);
}

}  // namespace

void log_line(std::initializer_list<LogArg> parts) {
  if (g_lines.fetch_add(1, std::memory_order_relaxed) >= kMaxLines) return;
  char buf[512];
  constexpr std::size_t cap = sizeof(buf) - 1;  // room for the newline
  std::size_t pos = append(buf, 0, cap, "memrec: ");
  for (const LogArg& a : parts) {
    pos = a.is_number ? append_number(buf, pos, cap, a.number) : append(buf, pos, cap, a.text);
  }
  buf[pos++] = '\n';
  // The writer's own table has /dev/null on 2: write to the program's stderr.
  const bool borrowed = has_private_descriptors();
  const int fd = borrowed ? borrow_program_stderr() : STDERR_FILENO;
  if (fd < 0) return;
  // A failed or short write to stderr has nowhere to be reported; ignore it.
  [[maybe_unused]] const ssize_t n = ::write(fd, buf, pos);
  // Not close(): our hook would take a guarded number of the program's table for it.
  if (borrowed) syscall(SYS_close, fd);
}

std::string_view errno_text(int err) {
  const char* s = strerrordesc_np(err);
  return s != nullptr ? s : "unknown error";
}

}  // namespace memrec::preload
