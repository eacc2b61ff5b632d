// The bar redraws at most ten times a second with a carriage return and
// never prints a newline, so it leaves no trace once erased; the lines stay.
#include "common/progress_bar.h"

#include <unistd.h>

#include <utility>

namespace memrec::analyzer {

ProgressBar::ProgressBar(std::FILE* out, bool enabled, std::string label, Style style, std::chrono::milliseconds every)
    : out_(out),
      enabled_(enabled),
      style_(style),
      every_(every),
      label_(std::move(label)),
      start_(std::chrono::steady_clock::now()) {}

ProgressBar::~ProgressBar() {
  if (drawn_ && style_ == Style::kBar) {
    std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
  }
}

bool ProgressBar::is_terminal(int fd) { return isatty(fd) == 1; }

ProgressBar::Style ProgressBar::style_for(int fd) { return is_terminal(fd) ? Style::kBar : Style::kLines; }

void ProgressBar::update(std::size_t done, std::size_t total) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (style_ == Style::kLines) {
    if (now - start_ < every_ || (drawn_ && now - last_draw_ < every_)) return;
    last_draw_ = now;
    drawn_ = true;
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
    std::fprintf(out_, "memrec: %s: %d%% after %lld s\n", label_.c_str(), static_cast<int>(100 * done / total),
                 static_cast<long long>(seconds));
    std::fflush(out_);
    return;
  }
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  drawn_ = true;
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::fprintf(out_, "\r\x1b[Kmemrec: %s [%.*s%*s] %3d%%", label_.c_str(), filled, "##############################",
               kWidth - filled, "", static_cast<int>(100 * done / total));
  std::fflush(out_);
}

}  // namespace memrec::analyzer
