// The figure an export weighs each call site by (`memrec export --metric`),
// shared by the single-metric formats (collapsed, svg) and the diff.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "reports/call_sites.h"

namespace memrec::analyzer {

enum class ExportMetric {
  kAllocated,        // bytes allocated in the window
  kAllocations,      // allocation calls in the window
  kLeaked,           // bytes allocated in the window and live at its end, program sites only
  kPeak,             // bytes live at the window's peak
  kLiveAtEnd,        // bytes allocated in the window and live at its end, runtime sites included
  kLeakedCount,      // blocks behind kLeaked
  kTemporary,        // allocations freed before their thread's next one
  kRuntimeRetained,  // kLiveAtEnd's bytes of runtime sites only (what the runtime kept)
};

// The names, for messages and --help.
inline constexpr const char* kExportMetricNames =
    "allocated, allocations, leaked, leaked-count, peak, live-at-end, temporary, runtime-retained";

std::optional<ExportMetric> parse_export_metric(std::string_view name);
std::string_view export_metric_name(ExportMetric metric);
bool metric_is_bytes(ExportMetric metric);
std::uint64_t site_value(const CallSite& site, ExportMetric metric);

}  // namespace memrec::analyzer
