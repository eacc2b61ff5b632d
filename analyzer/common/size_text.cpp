#include "common/size_text.h"

#include <fmt/format.h>

namespace memrec::analyzer {

std::string size_text(std::uint64_t n) {
  if (n < 1024) return fmt::format("{} B", n);
  if (n < (1ull << 20)) return fmt::format("{:.1f} KiB", static_cast<double>(n) / 1024);
  if (n < (1ull << 30)) return fmt::format("{:.1f} MiB", static_cast<double>(n) / (1 << 20));
  return fmt::format("{:.2f} GiB", static_cast<double>(n) / (1 << 30));
}

std::string signed_size_text(std::int64_t n) {
  const std::uint64_t magnitude = n < 0 ? 0 - static_cast<std::uint64_t>(n) : static_cast<std::uint64_t>(n);
  return (n > 0 ? "+" : n < 0 ? "-" : "") + size_text(magnitude);
}

std::string signed_count_text(std::int64_t n) { return n > 0 ? fmt::format("+{}", n) : fmt::format("{}", n); }

std::string percent_text(std::uint64_t base, std::uint64_t next) {
  if (base == 0) return next == 0 ? std::string() : std::string("new");
  const double change = (static_cast<double>(next) - static_cast<double>(base)) * 100.0 / static_cast<double>(base);
  return fmt::format("{:+.1f}%", change);
}

std::string count_of(std::uint64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

}  // namespace memrec::analyzer
