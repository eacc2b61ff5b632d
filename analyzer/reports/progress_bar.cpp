// Redraws at most ten times a second with a carriage return; never prints a
// newline, so it leaves no trace once erased.
#include "reports/progress_bar.h"

#include <unistd.h>

#include <utility>

namespace memrec::analyzer {

ProgressBar::ProgressBar(std::FILE* out, bool enabled, std::string label)
    : out_(out), enabled_(enabled), label_(std::move(label)), start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  if (drawn_) {
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
  }
}

bool ProgressBar::is_terminal(int fd) { return isatty(fd) == 1; }

void ProgressBar::update(std::size_t done, std::size_t total) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::fprintf(out_, "\r\x1b[Kmemrec: loading %s [%.*s%*s] %3d%%", label_.c_str(), filled,
               "##############################", kWidth - filled, "", static_cast<int>(100 * done / total));
  std::fflush(out_);
}

}  // namespace memrec::analyzer
