// A one-line progress bar on stderr for long loads: shown only when stderr is
// a terminal and only once the work has taken a second, erased when done.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace memrec::analyzer {

class ProgressBar {
 public:
  // `enabled` false makes every call a no-op (stderr not a terminal, --json piped).
  ProgressBar(std::FILE* out, bool enabled, std::string label);
  ~ProgressBar();  // erases the line if one was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::size_t done, std::size_t total);

  // Whether `fd` is a terminal: the usual way to decide `enabled`.
  static bool is_terminal(int fd);

 private:
  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace memrec::analyzer
