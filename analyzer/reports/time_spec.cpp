// Decimal fractions are read digit by digit into integer nanoseconds, so
// `1.1s` is exactly 1100000000 ns, not whatever a double rounds it to.
#include "reports/time_spec.h"

#include <array>
#include <string>
#include <utility>

namespace memrec::analyzer {
namespace {

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 6> kUnits = {{
    {"ns", 1},
    {"us", 1000},
    {"ms", 1000000},
    {"s", 1000000000},
    {"m", 60000000000},
    {"h", 3600000000000},
}};

Error bad(std::string_view text, std::string_view why) {
  return Error{ErrorCode::kUsage, "'" + std::string(text) + "' is not a time (" + std::string(why) +
                                      "): write e.g. 1.5s, 200ms, +3s, 750us"};
}

}  // namespace

Result<std::uint64_t> parse_time_spec(std::string_view text) {
  std::string_view s = text;
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  std::size_t digits_end = 0;
  while (digits_end < s.size() && ((s[digits_end] >= '0' && s[digits_end] <= '9') || s[digits_end] == '.')) {
    ++digits_end;
  }
  const std::string_view number = s.substr(0, digits_end);
  const std::string_view unit_text = s.substr(digits_end);
  if (number.empty() || number == ".") return bad(text, "no number");
  std::uint64_t unit = 0;
  if (unit_text.empty()) unit = 1000000000;
  for (const auto& [name, ns] : kUnits) {
    if (unit_text == name) unit = ns;
  }
  if (unit == 0) return bad(text, "unknown unit");
  std::uint64_t whole = 0;
  std::uint64_t frac_num = 0;
  std::uint64_t frac_den = 1;
  bool point = false;
  for (const char c : number) {
    if (c == '.') {
      if (point) return bad(text, "two decimal points");
      point = true;
      continue;
    }
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (!point) {
      if (whole > (~0ull - d) / 10) return bad(text, "too large");
      whole = whole * 10 + d;
    } else if (frac_den < 1000000000000ull) {
      frac_num = frac_num * 10 + d;
      frac_den *= 10;
    }
  }
  if (whole > ~0ull / unit) return bad(text, "too large");
  return whole * unit + frac_num * unit / frac_den;
}

}  // namespace memrec::analyzer
