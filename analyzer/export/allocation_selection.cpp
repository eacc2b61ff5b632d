// The first pass costs one more load of the dump and ~14 bytes an allocation
// (model/allocation_table.h) while it runs; exports without filters skip it.
#include "export/allocation_selection.h"

#include <fmt/format.h>

#include <charconv>

#include "common/time_spec.h"
#include "model/allocation_filter.h"
#include "model/allocation_table.h"
#include "reports/site_match.h"

namespace memrec::analyzer {
namespace {

struct Unit {
  std::string_view suffix;
  std::uint64_t factor;
};
// Longest suffixes first, so `KiB` is not read as `B`; fail_if.cpp reads the same units.
constexpr Unit kSizeUnits[] = {
    {"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}, {"KB", 1000},      {"MB", 1000000},
    {"GB", 1000000000},  {"K", 1ull << 10},   {"M", 1ull << 20},   {"G", 1ull << 30}, {"B", 1}};

Error usage(std::string_view option, std::string_view text, std::string_view why) {
  return Error{ErrorCode::kUsage, fmt::format("export: --{} '{}': {}", option, text, why)};
}

Result<std::uint64_t> parse_size(std::string_view option, std::string_view text) {
  std::string_view digits = text;
  std::uint64_t factor = 1;
  for (const Unit& u : kSizeUnits) {
    if (digits.size() > u.suffix.size() && digits.ends_with(u.suffix)) {
      digits.remove_suffix(u.suffix.size());
      factor = u.factor;
      break;
    }
  }
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) {
    return usage(option, text, "a size is whole bytes with an optional unit (4096, 4KiB, 1M, 2GB)");
  }
  if (n > ~0ull / factor) return usage(option, text, "too large");
  return n * factor;
}

Result<std::uint64_t> parse_time(std::string_view option, const std::string& text) {
  auto t = parse_time_spec(text);
  if (!t) return Error{ErrorCode::kUsage, fmt::format("export: --{} {}", option, t.error().message)};
  return *t;
}

Result<std::uint32_t> parse_id(std::string_view option, std::string_view text) {
  std::uint32_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) {
    return usage(option, text, "expected a whole number from 0");
  }
  return n;
}

}  // namespace

bool ExportFilterOptions::any() const {
  return thread_index || site || match || search || min_size || max_size || min_lifetime || max_lifetime || alive_at ||
         leaked_only;
}

Result<ExportFilter> parse_export_filter(const ExportFilterOptions& o) {
  ExportFilter f;
  f.any = o.any();
  f.per_dump = o.thread_index || o.site;
  f.leaked_only = o.leaked_only;
  f.search = o.search;
  if (o.thread_index) {
    auto n = parse_id("thread-index", *o.thread_index);
    if (!n) return n.error();
    f.thread_index = *n;
  }
  if (o.site) {
    auto n = parse_id("site", *o.site);
    if (!n) return n.error();
    f.site = *n;
  }
  if (o.match) {
    auto re = compile_match(*o.match);
    if (!re) return usage("match", *o.match, re.error().message);
    f.match = o.match;
  }
  const std::pair<const std::optional<std::string>*, std::pair<const char*, std::uint64_t*>> sizes[] = {
      {&o.min_size, {"min-size", &f.min_size}}, {&o.max_size, {"max-size", &f.max_size}}};
  for (const auto& [text, into] : sizes) {
    if (!*text) continue;
    auto n = parse_size(into.first, **text);
    if (!n) return n.error();
    *into.second = *n;
  }
  const std::pair<const std::optional<std::string>*, std::pair<const char*, std::uint64_t*>> lives[] = {
      {&o.min_lifetime, {"min-lifetime", &f.min_life_ns}}, {&o.max_lifetime, {"max-lifetime", &f.max_life_ns}}};
  for (const auto& [text, into] : lives) {
    if (!*text) continue;
    auto n = parse_time(into.first, **text);
    if (!n) return n.error();
    *into.second = *n;
  }
  if (o.alive_at) {
    auto n = parse_time("alive-at", *o.alive_at);
    if (!n) return n.error();
    f.alive_at_ns = *n;
  }
  if (f.min_size > f.max_size) return Error{ErrorCode::kUsage, "export: --min-size is larger than --max-size"};
  if (f.min_life_ns > f.max_life_ns) {
    return Error{ErrorCode::kUsage, "export: --min-lifetime is longer than --max-lifetime"};
  }
  return f;
}

Result<std::vector<bool>> select_allocations(const std::string& path, const ExportFilter& filter,
                                             const RelativeWindow& window, const LoadOptions& load,
                                             Symbolizer& symbolizer) {
  AllocationTableBuilder builder;
  auto whole = build_heap_report(path, RelativeWindow{}, load, symbolizer, nullptr, &builder);
  if (!whole) return whole.error();
  if (builder.full()) {
    return Error{ErrorCode::kUsage,
                 fmt::format("export: {} holds more than {} allocations, more than a filter's table can index; "
                             "export it without filters",
                             path, AllocationTableBuilder::kMaxRows)};
  }
  const CallSites& sites = whole->sites;
  AllocationTable table = builder.finish();
  table.set_sites(sites.site_of_stack, static_cast<std::uint32_t>(sites.sites.size()));

  const std::uint64_t start = whole->dump.header.start_mono_ns;
  AllocationFilter f;
  f.min_size = filter.min_size;
  f.max_size = filter.max_size;
  f.min_life_ns = filter.min_life_ns;
  f.max_life_ns = filter.max_life_ns;
  if (filter.alive_at_ns) f.alive_at_ns = start + *filter.alive_at_ns;
  const auto resolved = resolve_window(window, path, start);
  if (!resolved) return resolved.error();
  if (filter.leaked_only) f.live_after_ns = resolved->to_ns ? start + *resolved->to_ns : kNeverFreed;
  if (filter.thread_index) {
    const std::size_t n = whole->dump.threads.size();
    if (*filter.thread_index >= n) {
      return Error{ErrorCode::kUsage,
                   fmt::format("export: --thread-index {}: {} has {} threads (0 to {}; memrec info lists them)",
                               *filter.thread_index, path, n, n == 0 ? 0 : n - 1)};
    }
    f.thread = *filter.thread_index;
  }
  if (filter.site) {
    const std::size_t n = sites.sites.size();
    if (*filter.site >= n) {
      return Error{ErrorCode::kUsage,
                   fmt::format("export: --site {}: {} has {} call sites (0 to {}, as memrec view numbers them)",
                               *filter.site, path, n, n == 0 ? 0 : n - 1)};
    }
    std::vector<bool> one(n, false);
    one[*filter.site] = true;
    keep_sites(f, one);
  }
  if (filter.match) {
    const auto re = compile_match(*filter.match);  // valid: parse_export_filter compiled it
    if (!re) return Error{ErrorCode::kUsage, "export: --match: " + re.error().message};
    keep_sites(f, sites_matching(sites, *re));
  }
  if (filter.search) keep_sites(f, sites_with_label(sites, *filter.search));
  return select_rows(table, f);
}

}  // namespace memrec::analyzer
