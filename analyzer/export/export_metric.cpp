// Metric names as the command line spells them.
#include "export/export_metric.h"

namespace memrec::analyzer {
namespace {

struct Named {
  ExportMetric metric;
  std::string_view name;
};
constexpr Named kNames[] = {
    {ExportMetric::kAllocated, "allocated"},   {ExportMetric::kAllocations, "allocations"},
    {ExportMetric::kLeaked, "leaked"},         {ExportMetric::kPeak, "peak"},
    {ExportMetric::kLiveAtEnd, "live-at-end"}, {ExportMetric::kLeakedCount, "leaked-count"},
    {ExportMetric::kTemporary, "temporary"},   {ExportMetric::kRuntimeRetained, "runtime-retained"}};

}  // namespace

std::optional<ExportMetric> parse_export_metric(std::string_view name) {
  for (const Named& n : kNames) {
    if (n.name == name) return n.metric;
  }
  return std::nullopt;
}

std::string_view export_metric_name(ExportMetric metric) {
  for (const Named& n : kNames) {
    if (n.metric == metric) return n.name;
  }
  return "?";
}

bool metric_is_bytes(ExportMetric metric) {
  return metric != ExportMetric::kAllocations && metric != ExportMetric::kLeakedCount &&
         metric != ExportMetric::kTemporary;
}

std::uint64_t site_value(const CallSite& site, ExportMetric metric) {
  switch (metric) {
    case ExportMetric::kAllocated:
      return site.allocated_bytes;
    case ExportMetric::kAllocations:
      return site.allocations;
    case ExportMetric::kLeaked:
      return site.runtime ? 0 : site.leaked_bytes;
    case ExportMetric::kPeak:
      return site.peak_bytes;
    case ExportMetric::kLiveAtEnd:
      return site.leaked_bytes;
    case ExportMetric::kLeakedCount:
      return site.runtime ? 0 : site.leaked_count;
    case ExportMetric::kTemporary:
      return site.temporary;
    case ExportMetric::kRuntimeRetained:
      return site.runtime ? site.leaked_bytes : 0;
  }
  return 0;
}

}  // namespace memrec::analyzer
