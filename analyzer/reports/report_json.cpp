// `memrec report --json` and `memrec export --format json`: the schema in
// docs/analyzer.md ("report --json"). Integration tests depend on these names;
// change them only with a new schema version. Times are ns since the dump's
// start, absent values null. Written as it is made (json_writer.h): cc1plus's
// 155,000 sites of ~61 frames would take tens of GB as one DOM (schema v1 even
// listed each site once per ranking, every frame in full).
#include "reports/report_output.h"

#include "common/first_use_numbering.h"
#include "common/json_writer.h"
#include "reports/dump_notes.h"
#include "reports/site_label.h"

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

json site_label_json(const CallSites& cs, const CallSite& s) {
  const SiteLabel l = site_label(cs, s);
  return {{"label_frame", s.frames.empty() ? json(nullptr) : json(l.frame)},
          {"label", s.frames.empty() ? json(nullptr) : json(l.text)},
          {"via", l.via.empty() ? json(nullptr) : json(l.via)}};
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

json window_json(const RelativeWindow& w) { return {{"from_ns", w.from_ns}, {"to_ns", optional_number(w.to_ns)}}; }

json loss_json(const HeapReport& r) {
  const reader::DumpFacts& f = r.dump.facts;
  const std::optional<std::uint64_t> lost =
      f.truncated_at ? std::optional<std::uint64_t>(f.file_bytes - *f.truncated_at) : std::nullopt;
  return {{"complete", dump_complete(r)},
          {"clean_end", f.clean_end},
          {"ended_by_exec", ended_by_exec(r)},
          {"exec_path", ended_by_exec(r) ? json(*f.exec_path) : json(nullptr)},
          {"truncated_at", optional_number(f.truncated_at)},
          {"lost_bytes", optional_number(lost)},
          {"error", r.stopped ? json(r.stopped->message) : json(nullptr)},
          {"notes", dump_notes_json(dump_notes(r.dump))},
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

namespace {

// The non-empty classes, smallest first: {from, to, count, bytes}.
json classes_json(const Log2Classes& c) {
  json out = json::array();
  for (unsigned k = 0; k < Log2Classes::kClasses; ++k) {
    if (c.count[k] == 0) continue;
    out.push_back({{"from", Log2Classes::lowest(k)},
                   {"to", Log2Classes::highest(k)},
                   {"count", c.count[k]},
                   {"bytes", c.bytes[k]}});
  }
  return out;
}

}  // namespace

nlohmann::json histograms_json(const Histograms& h) {
  return {{"sizes", classes_json(h.sizes)},
          {"lifetimes_ns", classes_json(h.lifetimes)},
          {"unfreed", {{"count", h.unfreed}, {"bytes", h.unfreed_bytes}}}};
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
          {"replaced_blocks", t.replaced_blocks},
          {"bad_stack_ids", t.bad_stack_ids},
          {"histograms", histograms_json(t.histograms)}};
}

namespace {

// What a report lists: the sites of each ranking's top, each site once, and
// each distinct frame of those sites once, numbered in the order first listed
// (rankings in kAllRankings order, frames innermost first).
struct Listing {
  explicit Listing(const CallSites& cs) : sites(cs.sites.size()), frames(cs.frames.size()) {}
  FirstUseNumbering sites;                           // of CallSites::sites
  FirstUseNumbering frames;                          // of CallSites::frames
  std::vector<std::vector<std::uint32_t>> rankings;  // site numbers, kAllRankings order
  std::vector<std::uint32_t> growth;                 // site numbers of report --growth's top, by score
  std::vector<std::uint32_t> retained;               // ... of report --retained's top, by bytes
};

Listing list_sites(const HeapReport& r, std::size_t top) {
  Listing l(r.sites);
  for (const SiteRanking ranking : kAllRankings) {
    std::vector<std::uint32_t>& ranked = l.rankings.emplace_back();
    for (const std::size_t i : top_sites(r, ranking, top)) ranked.push_back(l.sites.use(static_cast<std::uint32_t>(i)));
  }
  if (r.growth) {
    for (std::size_t n = 0; n < r.growth->order.size() && n < top; ++n) {
      l.growth.push_back(l.sites.use(r.growth->order[n]));
    }
  }
  if (r.retained) {
    for (std::size_t n = 0; n < r.retained->order.size() && n < top; ++n) {
      l.retained.push_back(l.sites.use(r.retained->order[n]));
    }
  }
  for (const std::uint32_t s : l.sites.used()) {
    for (const std::uint32_t f : r.sites.sites[s].frames) l.frames.use(f);
    for (const SiteFrames& path : r.sites.sites[s].paths) {
      for (const std::uint32_t f : path) l.frames.use(f);
    }
  }
  return l;
}

// One process's "report": its figures, then the tables the rankings point
// into, frames before the sites that use them, so a reader that streams the
// document can resolve every index when it meets it.
void write_heap_report(JsonWriter& w, const HeapReport& r, std::size_t top) {
  using Layout = JsonWriter::Layout;
  const Listing l = list_sites(r, top);
  w.begin_object();
  w.members(report_figures_json(r, windowed_figures(r)));
  w.members(instants_json(r));
  w.key("frames");
  w.begin_array();
  for (const std::uint32_t f : l.frames.used()) w.value(frame_json(r.sites.frames[f]), Layout::kInline);
  w.end_array();
  w.key("sites");
  w.begin_array();
  for (const std::uint32_t s : l.sites.used()) {
    const CallSite& site = r.sites.sites[s];
    w.begin_object(Layout::kInline);
    w.key("frames");
    w.begin_array();
    for (const std::uint32_t f : site.frames) w.value(l.frames[f]);
    w.end_array();
    w.members(site_label_json(r.sites, site));
    if (!site.paths.empty()) {
      w.key("paths");
      w.begin_array();
      for (const SiteFrames& path : site.paths) {
        w.begin_array(Layout::kInline);
        for (const std::uint32_t f : path) w.value(l.frames[f]);
        w.end_array();
      }
      w.end_array();
    }
    w.members(site_figures_json(site));
    w.end_object();
  }
  w.end_array();
  w.key("rankings");
  w.begin_object();
  for (std::size_t k = 0; k < std::size(kAllRankings); ++k) {
    w.key(ranking_name(kAllRankings[k]));
    w.begin_array(Layout::kInline);
    for (const std::uint32_t s : l.rankings[k]) w.value(s);
    w.end_array();
  }
  w.end_object();
  w.key("growth");
  if (!r.growth) {
    w.value(json(nullptr));
  } else {
    const GrowthRanking& g = *r.growth;
    w.begin_object();
    w.members({{"from_ns", g.from_ns}, {"to_ns", g.to_ns}, {"warmup_ns", g.warmup_ns}, {"buckets", g.buckets}});
    w.key("sites");
    w.begin_array();
    for (std::size_t n = 0; n < l.growth.size(); ++n) {
      const GrowthFit& f = g.fits[g.order[n]];
      w.value(json{{"site", l.growth[n]},
                   {"slope_bytes_per_minute", f.slope_bytes_per_minute},
                   {"r2", f.r2},
                   {"net_bytes", f.net_bytes},
                   {"grew_share", f.grew_share},
                   {"score", f.score}},
              Layout::kInline);
    }
    w.end_array();
    w.end_object();
  }
  w.key("retained");
  if (!r.retained) {
    w.value(json(nullptr));
  } else {
    const RetentionReport& k = *r.retained;
    w.begin_object();
    w.members({{"from_ns", k.from_ns},
               {"to_ns", k.to_ns},
               {"at_ns", k.at_ns},
               {"bytes", k.figures.bytes},
               {"count", k.figures.count}});
    w.key("sites");
    w.begin_array();
    for (std::size_t n = 0; n < l.retained.size(); ++n) {
      const std::uint32_t s = k.order[n];
      w.value(json{{"site", l.retained[n]}, {"bytes", k.figures.site_bytes[s]}, {"count", k.figures.site_count[s]}},
              Layout::kInline);
    }
    w.end_array();
    w.end_object();
  }
  w.end_object();
}

// pid, ppid, exe and the process's place in the tree: all of a "processes"
// element but its "report".
nlohmann::json process_header_json(const HeapReport& r, const ProcessNode& node, const std::vector<HeapReport>& all) {
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
          {"link", link == nullptr ? json(nullptr) : json(link)}};
}

}  // namespace

bool write_report_json(std::ostream& out, const std::vector<HeapReport>& reports, const std::vector<ProcessNode>& order,
                       std::size_t top, const std::set<std::string>& warnings) {
  JsonWriter w(out);
  w.begin_object();
  w.key("schema");
  w.value("memrec-report");
  w.key("version");
  w.value(kReportSchemaVersion);
  w.key("warnings");
  w.value(json(warnings));
  w.key("processes");
  w.begin_array();
  for (const ProcessNode& n : order) {
    w.begin_object();
    w.members(process_header_json(reports[n.input], n, reports));
    w.key("report");
    write_heap_report(w, reports[n.input], top);
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return w.finish();
}

// The recording's pauses and resumes and the markers, times from the start.
nlohmann::json instants_json(const HeapReport& r) {
  const std::uint64_t start = r.dump.header.start_mono_ns;
  const auto since = [start](std::uint64_t t) { return t - std::min(t, start); };
  json recording = json::array();
  for (const reader::RecordingRecord& t : r.dump.recording) {
    recording.push_back({{"time_ns", since(t.time_ns)}, {"on", t.on}, {"source", format::source_name(t.source)}});
  }
  json markers = json::array();
  for (const reader::MarkerRecord& m : r.dump.markers) {
    markers.push_back({{"time_ns", since(m.time_ns)}, {"label", m.label}, {"source", format::source_name(m.source)}});
  }
  return {{"recording", recording}, {"markers", markers}};
}

}  // namespace memrec::analyzer
