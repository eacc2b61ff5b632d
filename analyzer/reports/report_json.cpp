// `memrec report --json`: the schema in docs/analyzer.md ("report --json").
// Integration tests depend on these names; change them only with a new
// schema version. Times are ns since the dump's start, absent values null.
#include "reports/report_output.h"

namespace memrec::analyzer {
namespace {

using nlohmann::json;

json optional_number(const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json frame_json(const SiteFrame& f) {
  return {{"function", f.function.empty() ? json(nullptr) : json(f.function)},
          {"file", f.file.empty() ? json(nullptr) : json(f.file)},
          {"line", f.line == 0 ? json(nullptr) : json(f.line)},
          {"module", f.module.empty() ? json(nullptr) : json(f.module)},
          {"offset", f.module_offset},
          {"inlined", f.inlined},
          {"label", frame_label(f)}};
}

json site_figures_json(const CallSite& s) {
  return {{"allocations", s.allocations},
          {"allocated_bytes", s.allocated_bytes},
          {"temporary", s.temporary},
          {"leaked_bytes", s.runtime ? 0 : s.leaked_bytes},
          {"leaked_count", s.runtime ? 0 : s.leaked_count},
          {"runtime_retained_bytes", s.runtime ? s.leaked_bytes : 0},
          {"runtime_retained_count", s.runtime ? s.leaked_count : 0},
          {"peak_bytes", s.peak_bytes},
          {"runtime", s.runtime},
          {"runtime_function", s.runtime ? json(s.runtime_function) : json(nullptr)},
          {"truncated", s.truncated},
          {"stack_ids", s.stack_ids}};
}

namespace {

json site_json(const CallSites& sites, const CallSite& s) {
  json frames = json::array();
  for (const std::uint32_t f : s.frames) frames.push_back(frame_json(sites.frames[f]));
  json site = {{"frames", std::move(frames)}};
  site.update(site_figures_json(s));
  return site;
}

json window_json(const RelativeWindow& w) { return {{"from_ns", w.from_ns}, {"to_ns", optional_number(w.to_ns)}}; }

json loss_json(const HeapReport& r) {
  const reader::DumpFacts& f = r.dump.facts;
  const std::optional<std::uint64_t> lost =
      f.truncated_at ? std::optional<std::uint64_t>(f.file_bytes - *f.truncated_at) : std::nullopt;
  return {{"complete", f.clean_end && !f.truncated_at && !r.stopped},
          {"clean_end", f.clean_end},
          {"truncated_at", optional_number(f.truncated_at)},
          {"lost_bytes", optional_number(lost)},
          {"error", r.stopped ? json(r.stopped->message) : json(nullptr)},
          {"frames", f.frames},
          {"events", r.events},
          {"max_pending_events", r.max_pending_events},
          {"file_bytes", f.file_bytes}};
}

}  // namespace

WindowedFigures windowed_figures(const HeapReport& r) {
  return {r.window,
          r.totals,
          r.rss_at_peak_bytes,
          r.leaked_bytes,
          r.leaked_count,
          r.runtime_retained_bytes,
          r.runtime_retained_count,
          r.peak_runtime_bytes};
}

nlohmann::json report_figures_json(const HeapReport& r, const WindowedFigures& f) {
  const std::uint64_t start = r.dump.header.start_mono_ns;
  const HeapTotals& t = f.totals;
  const bool has_peak = t.peak_time_ns != 0;
  return {{"file", r.dump.path},
          {"dump", loss_json(r)},
          {"window", window_json(f.window)},
          {"duration_ns", r.duration_ns},
          {"threads", r.dump.threads.size()},
          {"allocations", t.allocations},
          {"frees", t.frees},
          {"allocated_bytes", t.allocated_bytes},
          {"temporary", t.temporary},
          {"peak",
           {{"bytes", t.peak_bytes},
            {"time_ns", has_peak ? json(t.peak_time_ns - std::min(t.peak_time_ns, start)) : json(nullptr)},
            {"rss_bytes", optional_number(f.rss_at_peak_bytes)},
            {"runtime_bytes", f.peak_runtime_bytes}}},
          {"leaked", {{"bytes", f.leaked_bytes}, {"count", f.leaked_count}}},
          {"runtime_retained", {{"bytes", f.runtime_retained_bytes}, {"count", f.runtime_retained_count}}},
          {"unmatched_frees", t.unmatched_frees},
          {"replaced_blocks", t.replaced_blocks}};
}

nlohmann::json heap_report_json(const HeapReport& r, std::size_t top) {
  json sites = json::object();
  for (const SiteRanking ranking : kAllRankings) {
    json list = json::array();
    for (const std::size_t i : top_sites(r, ranking, top)) list.push_back(site_json(r.sites, r.sites.sites[i]));
    sites[ranking_name(ranking)] = std::move(list);
  }
  json out = report_figures_json(r, windowed_figures(r));
  out["sites"] = std::move(sites);
  return out;
}

nlohmann::json process_json(const HeapReport& r, const ProcessNode& node, const std::vector<HeapReport>& all,
                            std::size_t top) {
  const reader::FileHeader& h = r.dump.header;
  const char* link = node.link == ProcessLink::kExec ? "exec" : node.link == ProcessLink::kFork ? "fork" : nullptr;
  json parent = nullptr;
  if (node.parent) parent = {{"pid", all[*node.parent].dump.header.pid}, {"file", all[*node.parent].dump.path}};
  return {{"pid", h.pid},
          {"ppid", h.ppid},
          {"exe", h.exe_path},
          {"cmdline", h.cmdline},
          {"start_wall_ns", h.start_wall_ns},
          {"depth", node.depth},
          {"parent", parent},
          {"link", link == nullptr ? json(nullptr) : json(link)},
          {"report", heap_report_json(r, top)}};
}

}  // namespace memrec::analyzer
