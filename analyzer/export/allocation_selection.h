// `memrec export`'s filters (docs/exports.md "Filters"): which allocations a
// profile counts, the conditions of memrec view's allocation table and
// flamegraph search. Parsed before any dump is read, so usage errors come
// first; then resolved per dump by a first pass over it that builds the whole
// run's allocation table and call sites exactly as memrec view does (so
// --site and --thread-index mean the ids the view shows) into one flag per
// allocation, which the report's replay then counts alone.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "load/dump_loader.h"
#include "memrec/reader/result.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

class Symbolizer;

// As given on the command line (or by memrec view's download links); absent: no condition.
struct ExportFilterOptions {
  std::optional<std::string> thread_index;  // a LoadedDump::threads index, as `memrec info` lists them
  std::optional<std::string> site;          // a call site id of memrec view
  std::optional<std::string> match;         // regex on frames' functions and modules (reports/site_match.h)
  std::optional<std::string> search;        // substring of a frame's label (the flamegraph's search)
  std::optional<std::string> min_size;      // bytes, with an optional unit (4096, 4KiB, 1M)
  std::optional<std::string> max_size;
  std::optional<std::string> min_lifetime;  // time specs (common/time_spec.h); never freed: forever
  std::optional<std::string> max_lifetime;
  std::optional<std::string> alive_at;  // live at this time since the dump's start
  bool leaked_only = false;             // live at the end of the range

  bool any() const;
};

// The same, checked; times relative to each dump's start.
struct ExportFilter {
  std::optional<std::uint32_t> thread_index;
  std::optional<std::uint32_t> site;
  std::optional<std::string> match;  // a valid regex
  std::optional<std::string> search;
  std::uint64_t min_size = 0;
  std::uint64_t max_size = ~0ull;
  std::uint64_t min_life_ns = 0;
  std::uint64_t max_life_ns = ~0ull;
  std::optional<std::uint64_t> alive_at_ns;
  bool leaked_only = false;
  bool any = false;
  bool per_dump = false;  // names a thread or site, which only one dump has
};

// kUsage with a sentence naming the option when a value does not parse.
Result<ExportFilter> parse_export_filter(const ExportFilterOptions& options);

// One flag per allocation of the dump at `path`, in merged order: whether it
// passes `filter`, with `window`'s end as "the end" of --leaked-only. kUsage
// when the dump has no such thread or site; the dump's own errors otherwise.
Result<std::vector<bool>> select_allocations(const std::string& path, const ExportFilter& filter,
                                             const RelativeWindow& window, const LoadOptions& load,
                                             Symbolizer& symbolizer);

}  // namespace memrec::analyzer
