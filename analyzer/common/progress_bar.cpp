// The bar redraws at most ten times a second with a carriage return and
// never prints a newline, so it leaves no trace once erased; the lines stay.
#include "common/progress_bar.h"

#include <unistd.h>

#include <cstdlib>
#include <string_view>
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

std::chrono::milliseconds ProgressBar::default_interval() {
  const char* given = std::getenv("MEMREC_PROGRESS_INTERVAL_MS");
  if (given != nullptr && *given != '\0') {
    char* end = nullptr;
    const long ms = std::strtol(given, &end, 10);
    if (*end == '\0' && ms > 0) return std::chrono::milliseconds(ms);
  }
  return std::chrono::seconds(10);
}

bool ProgressBar::is_terminal(int fd) { return isatty(fd) == 1; }

ProgressBar::Style ProgressBar::style_for(int fd) { return is_terminal(fd) ? Style::kBar : Style::kLines; }

namespace {

// "1,234,567": a load's event count is read at a glance.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  for (std::size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, 1, ',');
  return digits;
}

}  // namespace

void ProgressBar::update(std::size_t done, std::size_t total) { update(done, total, nullptr); }

void ProgressBar::update(std::size_t done, std::size_t total, const LoadProgress& load) { update(done, total, &load); }

void ProgressBar::update(std::size_t done, std::size_t total, const LoadProgress* load) {
  if (!enabled_ || total == 0) return;
  const auto now = std::chrono::steady_clock::now();
  if (load != nullptr && load->bytes_read > 0 && !bytes_started_) {
    bytes_started_ = true;
    bytes_since_ = now;
    bytes_at_since_ = load->bytes_read;
  }
  if (style_ == Style::kLines) {
    if (now - start_ < every_ || (drawn_ && now - last_draw_ < every_)) return;
  } else {
    if (now - start_ < std::chrono::seconds(1)) return;
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100)) return;
  }
  last_draw_ = now;
  drawn_ = true;
  const int percent = static_cast<int>(100 * done / total);
  std::string detail;
  if (load != nullptr) {
    char text[160];
    std::snprintf(text, sizeof text, "%.1f of %.1f MB read, %s events decoded",
                  static_cast<double>(load->bytes_read) / 1e6, static_cast<double>(load->bytes_total) / 1e6,
                  grouped(load->events).c_str());
    detail = text;
    const double pace_s = std::chrono::duration<double>(now - bytes_since_).count();
    const std::uint64_t read = load->bytes_read - bytes_at_since_;
    if (bytes_started_ && read > 0 && pace_s > 0 && load->bytes_total >= load->bytes_read) {
      const double left_s =
          pace_s * static_cast<double>(load->bytes_total - load->bytes_read) / static_cast<double>(read);
      std::snprintf(text, sizeof text, ", about %.0f s left", left_s);
      detail += text;
    }
  }
  if (style_ == Style::kLines) {
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now - start_).count();
    std::fprintf(out_, "memrec: %s: %d%% after %lld s%s%s\n", label_.c_str(), percent, static_cast<long long>(seconds),
                 detail.empty() ? "" : ": ", detail.c_str());
    std::fflush(out_);
    return;
  }
  constexpr int kWidth = 30;
  const int filled = static_cast<int>(kWidth * done / total);
  std::fprintf(out_, "\r\x1b[Kmemrec: %s [%.*s%*s] %3d%%%s%s", label_.c_str(), filled, "##############################",
               kWidth - filled, "", percent, detail.empty() ? "" : " ", detail.c_str());
  std::fflush(out_);
}

}  // namespace memrec::analyzer
