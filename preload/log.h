// One-line diagnostics from the preload, written with write(2) from a fixed
// buffer: reporting must never allocate, lock or throw while we are the
// allocator. At most kMaxLines per process so a broken setup cannot flood
// the program's stderr.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace memrec::preload {

// Pieces of a message: text, or a number printed in decimal.
struct LogArg {
  LogArg(std::string_view s) : text(s) {}
  LogArg(const char* s) : text(s != nullptr ? s : "(null)") {}
  LogArg(std::int64_t v) : number(v), is_number(true) {}
  LogArg(int v) : number(v), is_number(true) {}
  LogArg(std::uint64_t v) : number(static_cast<std::int64_t>(v)), is_number(true) {}

  std::string_view text;
  std::int64_t number = 0;
  bool is_number = false;
};

// Writes "memrec: " + the pieces + "\n" to stderr in one write(2).
void log_line(std::initializer_list<LogArg> parts);

// A short English description of an errno value ("No space left on device"),
// from glibc's untranslated table, so it cannot allocate.
std::string_view errno_text(int err);

}  // namespace memrec::preload
