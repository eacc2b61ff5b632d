// /api/dumps/{id}/maps: the anonymous mappings of model/mapping_record.h as
// JSON — the live mapped bytes over time, the mappings still live at the end,
// and each mapping stack's figures, its frames as /sites/{site} gives them.
// The record keeps no history of unmapped mappings, so a range narrows the
// series and the live table (mapped in it, live at the end, as "leaked" is
// for the heap) but not the per-stack figures, which are the whole run's.
#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <vector>

#include "server/request_resolver.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultRows = 100;
constexpr std::uint64_t kMaxRows = 1000;

std::string hex(std::uint64_t addr) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(addr));
  return text;
}

std::uint64_t since(const ViewDump& d, std::uint64_t time_ns) {
  return time_ns > d.start_ns() ? time_ns - d.start_ns() : 0;
}

// The stack's call site: its label fields, `site` and `frames` (null and
// empty for stack 0, or one the dump never defined).
void put_stack(json& row, const CallSites& sites, std::uint32_t stack) {
  row["stack"] = stack;
  const auto found = sites.site_of_stack.find(stack);
  if (found == sites.site_of_stack.end()) {
    put_site_label(row, sites, CallSite{});
    row["site"] = nullptr;
    row["frames"] = json::array();
    return;
  }
  const CallSite& site = sites.sites[found->second];
  row["site"] = found->second;
  put_site_label(row, sites, site);
  row["frames"] = frames_json(sites, site.frames, site.label_frame);
  row["truncated"] = site.truncated;
}

// The buckets that overlap the window, times relative to the dump's start.
json series_json(const ViewDump& d, const HeapTimeline& series, const TimeWindow& w) {
  json time = json::array(), bytes = json::array(), highest = json::array(), count = json::array();
  json maps = json::array(), unmaps = json::array();
  const std::uint64_t width = series.bucket_ns();
  const std::vector<TimelineBucket> buckets = series.buckets();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const std::uint64_t start = series.start_ns() + b * width;
    if (start > w.to_ns || start + width <= w.from_ns) continue;
    const TimelineBucket& x = buckets[b];
    time.push_back(since(d, start));
    bytes.push_back(x.heap_bytes);
    highest.push_back(x.heap_max_bytes);
    count.push_back(x.live_count);
    maps.push_back(x.alloc_count);
    unmaps.push_back(x.free_count);
  }
  return {{"bucket_ns", width},
          {"time_ns", std::move(time)},
          {"mapped_bytes", std::move(bytes)},
          {"mapped_max_bytes", std::move(highest)},
          {"live_count", std::move(count)},
          {"map_count", std::move(maps)},
          {"unmap_count", std::move(unmaps)}};
}

json totals_json(const ViewDump& d, const MappingRecord& m) {
  const MappingTotals& t = m.totals();
  return {{"mmaps", t.mmaps},
          {"mremaps", t.mremaps},
          {"munmaps", t.munmaps},
          {"missed_munmaps", t.missed_munmaps},
          {"mapped_bytes", t.mapped_bytes},
          {"unmapped_bytes", t.unmapped_bytes},
          {"peak_bytes", t.peak_bytes},
          {"peak_at_ns", t.peak_time_ns != 0 ? json(since(d, t.peak_time_ns)) : json(nullptr)},
          {"live_bytes", m.live().live_bytes()},
          {"live_count", m.live().live_count()}};
}

// Mapped within the window and live at the end, largest first (ties by address).
json mappings_json(const ViewDump& d, const MappingRecord& m, const TimeWindow& w, std::uint64_t limit,
                   std::uint64_t& total) {
  using Entry = std::pair<std::uint64_t, const MmapRanges::Mapping*>;  // (start, mapping)
  std::vector<Entry> rows;
  for (const auto& [start, mapping] : m.live().ranges()) {
    if (mapping.mapped_ns >= w.from_ns && mapping.mapped_ns <= w.to_ns) rows.emplace_back(start, &mapping);
  }
  total = rows.size();
  const auto larger = [](const Entry& a, const Entry& b) {
    const std::uint64_t sa = a.second->end - a.first;
    const std::uint64_t sb = b.second->end - b.first;
    return sa != sb ? sa > sb : a.first < b.first;
  };
  const auto shown = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(limit, rows.size()));
  std::partial_sort(rows.begin(), rows.begin() + shown, rows.end(), larger);
  json out = json::array();
  for (std::ptrdiff_t i = 0; i < shown; ++i) {
    const auto& [start, mapping] = rows[static_cast<std::size_t>(i)];
    json row = {
        {"address", hex(start)}, {"size_bytes", mapping->end - start}, {"mapped_at_ns", since(d, mapping->mapped_ns)}};
    put_stack(row, d.report.mapping_sites, mapping->stack.value);
    out.push_back(std::move(row));
  }
  return out;
}

// Every mapping stack, most live bytes first, then most mapped, then by id.
json stacks_json(const ViewDump& d, const MappingRecord& m, std::uint64_t limit) {
  std::unordered_map<std::uint32_t, std::uint64_t> live_count;
  for (const auto& [start, mapping] : m.live().ranges()) ++live_count[mapping.stack.value];
  using Entry = std::pair<std::uint32_t, const MappingStackFigures*>;
  std::vector<Entry> rows;
  for (const auto& [id, figures] : m.stacks()) rows.emplace_back(id, &figures);
  const auto before = [](const Entry& a, const Entry& b) {
    if (a.second->live_bytes != b.second->live_bytes) return a.second->live_bytes > b.second->live_bytes;
    if (a.second->mapped_bytes != b.second->mapped_bytes) return a.second->mapped_bytes > b.second->mapped_bytes;
    return a.first < b.first;
  };
  const auto shown = static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(limit, rows.size()));
  std::partial_sort(rows.begin(), rows.begin() + shown, rows.end(), before);
  json out = json::array();
  for (std::ptrdiff_t i = 0; i < shown; ++i) {
    const auto& [id, s] = rows[static_cast<std::size_t>(i)];
    const auto count = live_count.find(id);
    json row = {{"mmaps", s->mmaps},
                {"mremaps", s->mremaps},
                {"mapped_bytes", s->mapped_bytes},
                {"unmapped_bytes", s->unmapped_bytes},
                {"live_bytes", s->live_bytes},
                {"live_count", count == live_count.end() ? 0 : count->second},
                {"peak_bytes", s->peak_bytes},
                {"first_ns", since(d, s->first_ns)},
                {"last_ns", since(d, s->last_ns)}};
    put_stack(row, d.report.mapping_sites, id);
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

ApiAnswer api_maps(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const std::optional<TimeWindow> range = request.range();
  const std::optional<std::uint64_t> limit = request.count("limit", 1, kMaxRows, kDefaultRows);
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  if (!d.mappings) return fail(404, "This dump was loaded without its mappings.");
  const MappingRecord& m = *d.mappings;
  const TimeWindow& w = *range;
  const std::uint64_t rows = *limit;
  std::uint64_t mappings_total = 0;
  json mappings = mappings_json(d, m, w, rows, mappings_total);
  return ok({{"totals", totals_json(d, m)},
             {"series", series_json(d, m.series(), w)},
             {"mappings", std::move(mappings)},
             {"mappings_total", mappings_total},
             {"stacks", stacks_json(d, m, rows)},
             {"stacks_total", m.stacks().size()},
             {"limit", rows},
             {"markers", markers_within(d, w)},
             {"range", range_json(d, w)}});
}

}  // namespace memrec::analyzer::server
