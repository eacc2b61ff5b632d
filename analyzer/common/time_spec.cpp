// Decimal fractions are read digit by digit into integer nanoseconds, so
// `1.1s` is exactly 1100000000 ns, not whatever a double rounds it to.
#include "common/time_spec.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <utility>

#include <fmt/format.h>

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
                                      "): write e.g. 1.5s, 200ms, +3s, 750us or mark:LABEL"};
}

constexpr std::string_view kMarkPrefix = "mark:";
constexpr std::size_t kListedLabels = 10;

std::size_t occurrences(std::string_view label, const std::vector<reader::MarkerRecord>& markers) {
  std::size_t n = 0;
  for (const reader::MarkerRecord& m : markers) n += m.label == label ? 1 : 0;
  return n;
}

// The `n`th (from 1) marker named `label`, if there are that many.
const reader::MarkerRecord* nth(std::string_view label, std::size_t n,
                                const std::vector<reader::MarkerRecord>& markers) {
  for (const reader::MarkerRecord& m : markers) {
    if (m.label == label && --n == 0) return &m;
  }
  return nullptr;
}

std::string known_labels(const std::vector<reader::MarkerRecord>& markers) {
  std::vector<std::string_view> labels;
  for (const reader::MarkerRecord& m : markers) {
    if (std::find(labels.begin(), labels.end(), m.label) == labels.end()) labels.push_back(m.label);
  }
  std::string out;
  for (std::size_t i = 0; i < labels.size() && i < kListedLabels; ++i) {
    out += fmt::format("{}'{}'", i == 0 ? "" : ", ", labels[i]);
  }
  if (labels.size() > kListedLabels) out += fmt::format(" and {} more", labels.size() - kListedLabels);
  return out;
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

Result<TimePoint> parse_time_point(std::string_view text) {
  if (text.starts_with(kMarkPrefix)) {
    const std::string_view label = text.substr(kMarkPrefix.size());
    if (label.empty()) return bad(text, "mark: needs a marker's label");
    return TimePoint{0, std::string(label)};
  }
  auto ns = parse_time_spec(text);
  if (!ns) return ns.error();
  return TimePoint{*ns, std::nullopt};
}

Result<std::uint64_t> resolve_mark(std::string_view mark, const std::vector<reader::MarkerRecord>& markers,
                                   std::uint64_t start_ns, std::string_view file) {
  const reader::MarkerRecord* found = nth(mark, 1, markers);
  if (found == nullptr) {
    // mark:LABEL#N: the Nth marker named LABEL.
    const std::size_t hash = mark.rfind('#');
    std::size_t n = 0;
    if (hash != std::string_view::npos && hash > 0) {
      const std::string_view digits = mark.substr(hash + 1);
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
      if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) n = 0;
    }
    const std::string_view label = n > 0 ? mark.substr(0, hash) : mark;
    const std::size_t count = occurrences(label, markers);
    if (n > 0 && count > 0) {
      found = nth(label, n, markers);
      if (found == nullptr) {
        return Error{ErrorCode::kUsage, fmt::format("{}: marker '{}' occurs {} time{}; mark:{} asks for occurrence {}",
                                                    file, label, count, count == 1 ? "" : "s", mark, n)};
      }
    } else if (markers.empty()) {
      return Error{ErrorCode::kUsage,
                   fmt::format("{}: no marker '{}': the dump has no markers (set them with memrec_mark() or "
                               "memrec mark PID LABEL)",
                               file, mark)};
    } else {
      return Error{ErrorCode::kUsage,
                   fmt::format("{}: no marker '{}'; its markers are {}", file, mark, known_labels(markers))};
    }
  }
  return found->time_ns > start_ns ? found->time_ns - start_ns : 0;
}

}  // namespace memrec::analyzer
