// Amounts take binary (KiB, MiB, GiB) and decimal (KB, MB, GB) units; a
// percentage is of the base total, and any growth from a zero base crosses it.
#include "diff/fail_if.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

namespace memrec::analyzer {
namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};
constexpr Unit kUnits[] = {{"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"KB", 1e3},         {"MB", 1e6},
                           {"GB", 1e9},     {"K", 1024.0},      {"M", 1048576.0},      {"G", 1073741824.0}, {"B", 1.0},
                           {"%", 1.0}};

Error usage(std::string_view text, std::string_view why) {
  return Error{ErrorCode::kUsage, fmt::format("diff: --fail-if '{}': {}", text, why)};
}

}  // namespace

Result<Threshold> parse_threshold(std::string_view text) {
  Threshold t;
  t.text = std::string(text);
  if (text == "new-leak") {
    t.kind = Threshold::Kind::kNewLeak;
    return t;
  }
  const std::size_t gt = text.find('>');
  if (gt == std::string_view::npos) {
    return usage(text, "expected METRIC>AMOUNT (peak>5%, leaked>1MiB) or new-leak");
  }
  t.metric = std::string(text.substr(0, gt));
  if (!diff_field(t.metric))
    return usage(text, "the metric is one of peak, leaked, leaked-count, allocated, allocations, temporary");
  std::string_view amount = text.substr(gt + 1);
  double factor = 1.0;
  for (const Unit& u : kUnits) {
    if (amount.size() > u.suffix.size() && amount.ends_with(u.suffix)) {
      amount.remove_suffix(u.suffix.size());
      factor = u.factor;
      t.percent = u.suffix == "%";
      break;
    }
  }
  double value = 0;
  const auto [end, ec] = std::from_chars(amount.data(), amount.data() + amount.size(), value);
  if (ec != std::errc() || end != amount.data() + amount.size() || value < 0) {
    return usage(text, "the amount is a number with an optional unit (B, KiB, MiB, GiB, KB, MB, GB) or %");
  }
  t.amount = value * factor;
  return t;
}

std::optional<std::string> crossed(const Threshold& t, const HeapDiff& diff) {
  if (t.kind == Threshold::Kind::kNewLeak) {
    for (const SiteDiff& s : diff.sites) {
      if (s.base.leaked_bytes == 0 && s.next.leaked_bytes > 0) {
        const std::string where = s.frames.empty() ? "[no stack]" : diff_site_label(diff, s);
        return fmt::format("new-leak: {} leaks {} bytes in {} block{}, and leaked nothing in the base", where,
                           s.next.leaked_bytes, s.next.leaked_count, s.next.leaked_count == 1 ? "" : "s");
      }
    }
    return std::nullopt;
  }
  const auto field = *diff_field(t.metric);
  const std::uint64_t base = diff.base_totals.*field;
  const std::uint64_t next = diff.next_totals.*field;
  if (next <= base) return std::nullopt;
  const double growth = static_cast<double>(next - base);
  if (t.percent) {
    if (base != 0 && growth * 100.0 <= t.amount * static_cast<double>(base)) return std::nullopt;
    const double pct = base == 0 ? 0 : growth * 100.0 / static_cast<double>(base);
    return base == 0 ? fmt::format("{}: grew from 0 to {}", t.text, next)
                     : fmt::format("{}: grew by {:.2f}% ({} -> {})", t.text, pct, base, next);
  }
  if (growth <= t.amount) return std::nullopt;
  return fmt::format("{}: grew by {} ({} -> {})", t.text, next - base, base, next);
}

}  // namespace memrec::analyzer
