// Progress of long loads on stderr. On a terminal, a one-line bar, drawn once
// the work has taken a second and erased when done. Elsewhere (a log file, a
// pipe), a line every ten seconds once the work has taken ten: a two-minute
// load of a big dump must not look hung in a service's log.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>

namespace memrec::analyzer {

class ProgressBar {
 public:
  enum class Style { kBar, kLines };
  // `label` says what is under way ("loading big.dat"). `enabled` false
  // makes every call a no-op (--no-progress). `every`: how
  // often lines are printed, and after how long the first (tests shorten it).
  ProgressBar(std::FILE* out, bool enabled, std::string label, Style style = Style::kBar,
              std::chrono::milliseconds every = std::chrono::seconds(10));
  // The style for `fd`: a bar on a terminal, lines elsewhere.
  static Style style_for(int fd);
  ~ProgressBar();  // erases the line if one was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::size_t done, std::size_t total);

  // Whether `fd` is a terminal.
  static bool is_terminal(int fd);

 private:
  std::FILE* out_;
  bool enabled_;
  Style style_;
  std::chrono::milliseconds every_;
  bool drawn_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace memrec::analyzer
