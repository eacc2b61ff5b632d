// Progress of long loads on stderr. On a terminal, a one-line bar, drawn once
// the work has taken a second and erased when done. Elsewhere (a log file, a
// pipe), a line every ten seconds once the work has taken ten: a two-minute
// load of a big dump must not look hung in a service's log.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace memrec::analyzer {

// How far a dump's load is, beside its steps: the bytes of the file read so
// far and the events decoded from them.
struct LoadProgress {
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_total = 0;
  std::uint64_t events = 0;
};

class ProgressBar {
 public:
  enum class Style { kBar, kLines };
  // `label` says what is under way ("loading big.dat"). `enabled` false
  // makes every call a no-op (--no-progress). `every`: how
  // often lines are printed, and after how long the first (tests shorten it).
  ProgressBar(std::FILE* out, bool enabled, std::string label, Style style = Style::kBar,
              std::chrono::milliseconds every = default_interval());
  // Ten seconds, or MEMREC_PROGRESS_INTERVAL_MS: the integration tests see
  // a load's lines without a load of minutes.
  static std::chrono::milliseconds default_interval();
  // The style for `fd`: a bar on a terminal, lines elsewhere.
  static Style style_for(int fd);
  ~ProgressBar();  // erases the line if one was drawn
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  void update(std::size_t done, std::size_t total);
  // The same with the bytes read and events decoded, and the time left
  // estimated from the bytes (the load's pace is the file's).
  void update(std::size_t done, std::size_t total, const LoadProgress& load);

  // Whether `fd` is a terminal.
  static bool is_terminal(int fd);

 private:
  void update(std::size_t done, std::size_t total, const LoadProgress* load);

  std::FILE* out_;
  bool enabled_;
  Style style_;
  std::chrono::milliseconds every_;
  bool drawn_ = false;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
  // When the first bytes were read: the pace excludes what came before (a
  // scan of an older dump's frames).
  std::chrono::steady_clock::time_point bytes_since_;
  std::uint64_t bytes_at_since_ = 0;
  bool bytes_started_ = false;
};

}  // namespace memrec::analyzer
