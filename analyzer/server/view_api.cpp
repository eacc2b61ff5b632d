// Builds the API's JSON for the dump list, a range's summary, timeline,
// sites and flamegraph. Names from the dump (functions, files, command lines)
// go out as JSON strings only; the page puts them in as text.
#include "server/view_api.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <string_view>
#include <tuple>
#include <variant>

#include "model/window_timeline.h"
#include "reports/flame_tree.h"
#include "reports/info_report.h"
#include "reports/report_output.h"
#include "reports/site_label.h"
#include "server/request_resolver.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultLimit = 100;
constexpr std::uint64_t kMaxLimit = 1000;
constexpr std::uint64_t kMaxBuckets = 512;
constexpr std::size_t kMaxPaths = 50;  // a grouped site's paths listed by /sites/{site}

// What a site is ranked by: its range figures, or its live bytes at `at`.
struct SiteValues {
  const std::vector<CallSite>& sites;
  const std::vector<SiteFigures>& figures;
  const SiteLive* live;
  const std::vector<GrowthFit>* growth = nullptr;  // sort=growth only
  const SiteLive* kept = nullptr;                  // sort=kept only: allocated in the range, live at C
};

struct SortKey {
  std::string_view name;
  std::uint64_t (*value)(const SiteValues&, std::size_t);
};
constexpr std::array<SortKey, 10> kSortKeys = {{
    {"leaked", [](const SiteValues& v, std::size_t i) { return v.sites[i].runtime ? 0 : v.figures[i].leaked_bytes; }},
    {"count", [](const SiteValues& v, std::size_t i) { return v.sites[i].runtime ? 0 : v.figures[i].leaked_count; }},
    {"peak", [](const SiteValues& v, std::size_t i) { return v.figures[i].peak_bytes; }},
    {"allocated", [](const SiteValues& v, std::size_t i) { return v.figures[i].allocated_bytes; }},
    {"allocations", [](const SiteValues& v, std::size_t i) { return v.figures[i].allocations; }},
    {"temporary", [](const SiteValues& v, std::size_t i) { return v.figures[i].temporary; }},
    {"retained", [](const SiteValues& v, std::size_t i) { return v.sites[i].runtime ? v.figures[i].leaked_bytes : 0; }},
    {"live", [](const SiteValues& v, std::size_t i) { return v.live != nullptr ? v.live->bytes[i] : 0; }},
    // Bytes a minute, rounded: sites whose score rounds to 0 did not grow.
    {"growth",
     [](const SiteValues& v, std::size_t i) {
       return v.growth != nullptr ? static_cast<std::uint64_t>(std::llround((*v.growth)[i].score)) : 0;
     }},
    {"kept", [](const SiteValues& v, std::size_t i) { return v.kept != nullptr ? v.kept->bytes[i] : 0; }},
}};

const SortKey* find_key(std::string_view name) {
  const auto key = std::find_if(kSortKeys.begin(), kSortKeys.end(), [&](const SortKey& k) { return k.name == name; });
  return key == kSortKeys.end() ? nullptr : &*key;
}

std::string sort_names() {
  std::string out;
  for (const SortKey& k : kSortKeys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

bool any_figure(const SiteValues& v, std::size_t i) {
  return std::any_of(kSortKeys.begin(), kSortKeys.end(), [&](const SortKey& k) { return k.value(v, i) != 0; });
}

enum class Listed { kNonZero, kAnyFigure };

// Site indices, largest `key` first, ties by the label text: those whose `key`
// is not zero, or (a table the user re-sorts) every site with any non-zero
// figure, so its rows do not come and go with the sort.
std::vector<std::size_t> ranked(const SiteSet& set, const SiteValues& v, const SortKey& key, Listed listed) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < v.sites.size(); ++i) {
    if (listed == Listed::kAnyFigure ? any_figure(v, i) : key.value(v, i) != 0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const std::uint64_t va = key.value(v, a);
    const std::uint64_t vb = key.value(v, b);
    if (va != vb) return va > vb;
    const std::vector<std::string>& labels = *set.labels;
    return std::tie(labels[a], a) < std::tie(labels[b], b);
  });
  return order;
}

json site_row(const SiteSet& set, std::size_t i, const SiteFigures& f) {
  const CallSite& s = set.sites->sites[i];
  json row = site_figures_json(with_figures(s, f));
  row["id"] = i;
  put_site_label(row, *set.sites, s);
  row["depth"] = s.frames.size();
  if (!s.paths.empty()) row["path_count"] = s.paths.size();
  return row;
}

using Flame = FlameTree<1>;

json flame_json(const Flame& tree, std::uint32_t at, std::uint64_t min_value, std::uint64_t& pruned) {
  json children = json::array();
  for (const std::uint32_t child : tree.children(at)) {
    if (tree.node(child).value[0] < min_value) {
      ++pruned;
      continue;
    }
    children.push_back(flame_json(tree, child, min_value, pruned));
  }
  json node = {{"name", tree.name(at)}, {"value", tree.node(at).value[0]}, {"children", std::move(children)}};
  put_short_name(node, tree.name(at));
  return node;
}

// Periods with recording on, clipped to the window, relative to the start.
json recording_periods(const ViewDump& d, const TimeWindow& w) {
  const auto& toggles = d.report.dump.recording;
  bool on = toggles.empty() || !toggles.front().on;  // a first "resume" means it started paused
  std::uint64_t since = d.start_ns();
  std::vector<std::pair<std::uint64_t, std::uint64_t>> periods;
  for (const reader::RecordingRecord& r : toggles) {
    if (on && !r.on) periods.emplace_back(since, r.time_ns);
    if (!on && r.on) since = r.time_ns;
    on = r.on;
  }
  if (on) periods.emplace_back(since, std::max(d.end_ns(), since));
  json out = json::array();
  for (auto [a, b] : periods) {
    a = std::max(a, w.from_ns);
    b = std::min(b, w.to_ns);
    if (a <= b) out.push_back(json::array({a - d.start_ns(), b - d.start_ns()}));
  }
  return out;
}

// Whether the dump's allocation table is there: "ready", "building" (with
// `percent`) or "failed" (with `error`).
json table_state(const ViewDump& d) {
  if (d.table() != nullptr) return {{"state", "ready"}};
  if (const std::string* why = d.slot->failure()) return {{"state", "failed"}, {"error", *why}};
  return {{"state", "building"}, {"percent", d.slot->percent()}};
}

// A dump given to memrec view that is not served: only its id, file and
// load state ("loading" with the bytes read, "failed" with why), both in
// `state` and in `load`, so a client that reads `state` alone sees it too.
json unloaded_json(std::size_t id, const DumpLoad& load) {
  json state;
  if (load.state() == LoadState::kFailed) {
    state = {{"state", "failed"}, {"error", load.error()}};
  } else {
    state = {{"state", "loading"},
             {"fraction", load.fraction()},
             {"bytes_read", load.bytes_read()},
             {"bytes_total", load.bytes_total()}};
  }
  return {{"id", id}, {"file", load.path()}, {"state", state["state"]}, {"load", std::move(state)}};
}

}  // namespace

ApiAnswer api_dumps(const ViewData& data) {
  json list = json::array();
  for (std::size_t i = 0; i < data.dumps.size(); ++i) {
    if (!data.ready(i)) {
      list.push_back(unloaded_json(i, *data.loads[i]));
      continue;
    }
    const HeapReport& r = data.dumps[i].report;
    list.push_back({{"id", i},
                    {"file", r.dump.path},
                    {"pid", r.dump.header.pid},
                    {"ppid", r.dump.header.ppid},
                    {"exe", r.dump.header.exe_path},
                    {"cmdline", r.dump.header.cmdline},
                    {"start_wall_ns", r.dump.header.start_wall_ns},
                    {"duration_ns", r.duration_ns},
                    {"peak_bytes", r.totals.peak_bytes},
                    {"leaked_bytes", r.leaked_bytes},
                    {"allocations", r.totals.allocations},
                    {"incomplete", !dump_complete(r)},
                    {"ended_by_exec", ended_by_exec(r)},
                    {"state", i < data.states.size() ? data.states[i]
                              : dump_complete(r)     ? "ended"
                                                     : "cut"},
                    {"table", table_state(data.dumps[i])},
                    {"load", {{"state", "ready"}}}});
    // A dump still followed: a range ending before this has all its events.
    if (const auto edge = data.dumps[i].followed_edge_ns) {
      list.back()["settled_ns"] = *edge > data.dumps[i].start_ns() ? *edge - data.dumps[i].start_ns() : 0;
    }
  }
  return ok({{"dumps", std::move(list)}, {"warnings", data.warnings}});
}

ApiAnswer api_summary(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const std::optional<TimeWindow> range = request.range();
  const auto fig = request.figures(range);
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const TimeWindow& w = *range;
  const HeapReport& r = d.report;
  WindowedFigures wf{RelativeWindow{w.from_ns - d.start_ns(), std::nullopt},
                     fig->totals,
                     fig->rss_at_peak_bytes,
                     fig->leaked_bytes,
                     fig->leaked_count,
                     fig->runtime_retained_bytes,
                     fig->runtime_retained_count,
                     fig->peak_runtime_bytes};
  if (param("to")) wf.window.to_ns = w.to_ns - d.start_ns();
  json body = report_figures_json(r, wf);
  body["bad_stack_ids"] = r.totals.bad_stack_ids;  // the whole run's: the table keeps no count by time
  body["pid"] = r.dump.header.pid;
  body["exe"] = r.dump.header.exe_path;
  body["cmdline"] = r.dump.header.cmdline;
  std::size_t sites_total = 0;
  for (const SiteFigures& f : fig->sites) {
    sites_total += (f.allocations | f.temporary | f.leaked_bytes | f.leaked_count | f.peak_bytes) != 0 ? 1 : 0;
  }
  body["sites_total"] = sites_total;
  json counters = json::object();
  json loss_counters = json::array();
  for (const auto& [key, value] : r.dump.facts.counters) {
    counters[counter_name(key)] = value;
    if (counter_means_loss(key)) loss_counters.push_back(counter_name(key));
  }
  body["counters"] = std::move(counters);
  body["loss_counters"] = std::move(loss_counters);
  body["range"] = range_json(d, w);
  // Every marker, also outside the range: the page resolves `mark:LABEL` in its links with them.
  body["markers"] = std::move(instants_json(r)["markers"]);
  return ok(std::move(body));
}

// /timeline's answer: `buckets` of `width` ns from the range's start, each
// with the highest RSS sample in it.
json timeline_json(const ViewDump& d, const TimeWindow& w, std::uint64_t width,
                   const std::vector<TimelineBucket>& buckets) {
  std::vector<std::optional<std::uint64_t>> rss_max(buckets.size());
  for (const reader::RssRecord& s : d.report.dump.rss) {
    if (s.time_ns < w.from_ns || s.time_ns > w.to_ns) continue;
    const auto b = static_cast<std::size_t>((s.time_ns - w.from_ns) / width);
    if (b < rss_max.size()) rss_max[b] = std::max(rss_max[b].value_or(0), s.rss_bytes);
  }
  json time = json::array(), heap = json::array(), highest = json::array(), count = json::array();
  json allocs = json::array(), frees = json::array(), temporary = json::array(), rss = json::array();
  for (std::size_t b = 0; b < buckets.size(); ++b) {
    const TimelineBucket& x = buckets[b];
    time.push_back(w.from_ns - d.start_ns() + b * width);
    heap.push_back(x.heap_bytes);
    highest.push_back(x.heap_max_bytes);
    count.push_back(x.live_count);
    allocs.push_back(x.alloc_count);
    frees.push_back(x.free_count);
    temporary.push_back(x.temporary_count);
    rss.push_back(rss_max[b] ? json(*rss_max[b]) : json(nullptr));
  }
  return {{"bucket_ns", width},
          {"time_ns", std::move(time)},
          {"heap_bytes", std::move(heap)},
          {"heap_max_bytes", std::move(highest)},
          {"live_count", std::move(count)},
          {"alloc_count", std::move(allocs)},
          {"free_count", std::move(frees)},
          {"temporary_count", std::move(temporary)},
          {"rss_bytes", std::move(rss)},
          {"recording", recording_periods(d, w)},
          {"markers", markers_within(d, w)},
          {"range", range_json(d, w)}};
}

ApiAnswer api_timeline(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const std::optional<TimeWindow> range = request.range();
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const TimeWindow& w = *range;
  // Before the table, the whole run's comes from the report's pass: its
  // buckets are as exact as the table's, but 2^k µs wide.
  if (d.table() == nullptr && d.early_timeline && !param("from") && !param("to")) {
    json body = timeline_json(d, w, d.early_timeline->bucket_ns(), d.early_timeline->buckets());
    body["table"] = table_state(d);
    return ok(std::move(body));
  }
  const AllocationTable* table = request.table();
  if (request.failed()) return request.failure();
  const WindowTimeline timeline = window_timeline(*table, w, kMaxBuckets);
  return ok(timeline_json(d, w, timeline.width_ns, timeline.buckets));
}

ApiAnswer api_sites(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const std::string sort = param("sort").value_or("leaked");
  const SortKey* key = find_key(sort);
  if (key == nullptr)
    request.refuse(400, "Unknown sort '" + sort.substr(0, 40) + "': use one of " + sort_names() + ".");
  const std::optional<std::uint64_t> offset = request.count("offset", 0, 1ull << 32, 0);
  const std::optional<std::uint64_t> limit = request.count("limit", 1, kMaxLimit, kDefaultLimit);
  const std::optional<TimeWindow> range = request.range();
  const std::optional<std::uint64_t> at_ns = request.time("at");
  if (sort == "live" && !at_ns) request.refuse(400, "sort=live needs at=T (ns since the dump's start).");
  const bool growth = sort == "growth" || param("growth") == "1";
  const bool kept = sort == "kept" || param("kept") == "1";
  const std::optional<std::uint64_t> spark = param("spark") ? request.count("spark", 8, 128, 0) : std::nullopt;
  const std::optional<SiteSet> found_set = request.sites();
  const auto figures = request.figures(range);
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const SiteSet& set = *found_set;
  const TimeWindow& w = *range;
  std::vector<SiteFigures> sums;
  const std::vector<SiteFigures>& fig = set_figures(set, figures->sites, sums);
  const AllocationTable* t = d.table();  // looked at once: it may be published meanwhile
  if ((at_ns || growth || kept) && t == nullptr) return fail(table_missing(d));
  std::optional<SiteLive> live;
  if (at_ns) live = set_live(set, live_by_site(*t, cursor_at(*t, *at_ns)));
  std::vector<GrowthFit> fits;
  if (growth) fits = set_growth(*t, set, growth_grid(w));
  // Kept: report --retained FROM..TO --at C, C the instant or else the range's end.
  const std::uint64_t kept_at = at_ns.value_or(w.to_ns);
  if (kept && kept_at < w.from_ns) {
    return fail(400,
                "The instant is before the range starts: nothing allocated in the range can be live at it. "
                "Pick an instant in or after the range, or clear it to use the range's end.");
  }
  std::optional<Retention> retention;
  std::optional<SiteLive> kept_live;
  if (kept) {
    retention = retained(*t, w.from_ns, w.to_ns, kept_at);
    kept_live = set_live(set, SiteLive{retention->site_bytes, retention->site_count});
  }
  const SiteValues values{set.sites->sites, fig, live ? &*live : nullptr, growth ? &fits : nullptr,
                          kept_live ? &*kept_live : nullptr};
  const std::vector<std::size_t> order = ranked(set, values, *key, Listed::kAnyFigure);

  const std::uint64_t first = *offset;
  const std::uint64_t end = std::min<std::uint64_t>(order.size(), first + *limit);
  std::vector<std::uint32_t> page;
  for (std::uint64_t i = first; i < end; ++i) page.push_back(static_cast<std::uint32_t>(order[i]));
  // Sparklines come from the table: while it is built, the rows go without.
  std::vector<std::uint64_t> sparks;
  if (spark && t != nullptr) sparks = set_sparklines(*t, set, page, w, static_cast<std::uint32_t>(*spark));
  json rows = json::array();
  for (std::size_t p = 0; p < page.size(); ++p) {
    json row = site_row(set, page[p], fig[page[p]]);
    if (live) {
      row["live_bytes"] = live->bytes[page[p]];
      row["live_count"] = live->count[page[p]];
    }
    if (growth) {
      const GrowthFit& f = fits[page[p]];
      row["growth"] = {{"slope_bytes_per_minute", f.slope_bytes_per_minute},
                       {"r2", f.r2},
                       {"net_bytes", f.net_bytes},
                       {"grew_share", f.grew_share},
                       {"score", f.score}};
    }
    if (kept_live) {
      row["kept_bytes"] = kept_live->bytes[page[p]];
      row["kept_count"] = kept_live->count[page[p]];
    }
    if (!sparks.empty())
      row["spark"] = std::vector<std::uint64_t>(sparks.begin() + p * *spark, sparks.begin() + (p + 1) * *spark);
    rows.push_back(std::move(row));
  }
  json body = {{"sort", sort},          {"offset", first},          {"limit", *limit},
               {"total", order.size()}, {"sites", std::move(rows)}, {"range", range_json(d, w)}};
  if (at_ns) body["at_ns"] = *at_ns - d.start_ns();
  if (growth) {
    const GrowthGrid grid = growth_grid(w);
    body["growth"] = {
        {"from_ns", grid.from_ns - d.start_ns()}, {"to_ns", grid.to_ns - d.start_ns()}, {"buckets", grid.buckets}};
  }
  if (retention) body["kept"] = kept_json(d, w, kept_at, *retention);
  if (spark && t == nullptr) body["table"] = table_state(d);
  return ok(std::move(body));
}

Checked<MetricValues> metric_values(const ViewDump& d, const ParamFn& param) {
  const std::string metric = param("metric").value_or("leaked");
  const SortKey* key = find_key(metric);
  if (key == nullptr || metric == "count" || metric == "retained" || metric == "growth" || metric == "kept") {
    return ApiError{400, "Unknown metric '" + metric.substr(0, 40) +
                             "': use one of leaked, peak, allocated, allocations, temporary, live."};
  }
  Resolver request(d, param);
  const std::optional<TimeWindow> range = request.range();
  const std::optional<std::uint64_t> at_ns = request.time("at");
  if (metric == "live" && !at_ns) request.refuse(400, "metric=live needs at=T (ns since the dump's start).");
  const std::optional<SiteOptions> options = request.take(site_options(param));
  const auto fig = request.figures(range);
  const AllocationTable* t = metric == "live" ? request.table() : nullptr;
  if (request.failed()) return request.error();
  // ?group=label changes no flamegraph: its leaves already merge by name on
  // each path, and a merged site keeps one member's frames, which would move
  // the other members' values onto that member's path.
  MetricValues out{metric, site_set(d, SiteOptions{options->raw, false}), {}, *range, at_ns};
  std::optional<SiteLive> live;
  if (t != nullptr) live = live_by_site(*t, cursor_at(*t, *at_ns));
  const SiteValues values{out.set.sites->sites, fig->sites, live ? &*live : nullptr};
  out.values.resize(out.set.sites->sites.size());
  for (std::size_t i = 0; i < out.values.size(); ++i) out.values[i] = key->value(values, i);
  return out;
}

ApiAnswer api_flame(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const std::optional<MetricValues> got = request.take(metric_values(d, param));
  if (request.failed()) return request.failure();
  const MetricValues& m = *got;

  const auto invert = param("invert");
  if (invert && *invert != "0" && *invert != "1") return fail(400, "invert must be 0 or 1.");
  const CallSites& cs = *m.set.sites;
  Flame tree("all", invert == "1");
  for (std::size_t i = 0; i < cs.sites.size(); ++i) {
    if (m.values[i] != 0) tree.add(cs, cs.sites[i], m.values[i]);
  }
  tree.sort_children();
  std::uint64_t pruned = 0;
  const std::uint64_t total = tree.node(0).value[0];
  json root = flame_json(tree, 0, total / 2000, pruned);
  json body = {{"metric", m.metric},
               {"total", total},
               {"pruned", pruned},
               {"root", std::move(root)},
               {"range", range_json(d, m.window)}};
  if (m.at_ns) body["at_ns"] = *m.at_ns - d.start_ns();
  body["inverted"] = invert == "1";
  return ok(std::move(body));
}

ApiAnswer api_site(const ViewData& data, const std::string& dump_id, const std::string& site_id, const ParamFn& param) {
  Resolver request(data, param);
  const std::optional<SiteRequest> site = request.site(dump_id, site_id);
  if (request.failed()) return request.failure();
  const auto& [dump, set, id, w] = *site;
  const ViewDump& d = *dump;
  const CallSites& cs = *set.sites;
  const std::optional<std::uint64_t> at = request.time("at");
  const auto figures = request.figures(w);
  if (request.failed()) return request.failure();
  const CallSite& s = cs.sites[id];
  json body = site_figures_json(with_figures(s, site_figures(set, id, figures->sites)));
  body["id"] = id;
  put_site_label(body, cs, s);
  body["frames"] = frames_json(cs, s.frames, s.label_frame);
  if (!s.paths.empty()) {
    // A grouped site's stacks, each folded at its own label frame.
    json paths = json::array();
    for (std::size_t p = 0; p < s.paths.size() && p < kMaxPaths; ++p) {
      paths.push_back(frames_json(cs, s.paths[p], label_position(cs, s.paths[p])));
    }
    body["paths"] = std::move(paths);
    body["path_count"] = s.paths.size();
  }
  body["range"] = range_json(d, w);
  if (const std::optional<std::uint64_t> t = at) {
    const AllocationTable* table = request.table();
    if (request.failed()) return request.failure();
    const AllocationTable& tab = *table;
    LiveBlocks live;
    for (const std::uint32_t member : set.members(id)) {
      const LiveBlocks of_member = site_live_at(tab, member, *t);
      live.bytes += of_member.bytes;
      live.count += of_member.count;
    }
    body["at_ns"] = *t - d.start_ns();
    body["live_bytes"] = live.bytes;
    body["live_count"] = live.count;
  }
  return ok(std::move(body));
}

ApiAnswer api_threads(const ViewData& data, const std::string& dump_id) {
  const ParamFn none = [](const std::string&) { return std::optional<std::string>(); };
  Resolver request(data, none);
  const ViewDump* found = request.dump(dump_id);
  if (request.failed()) return request.failure();
  const auto& threads = found->report.dump.threads;
  json list = json::array();
  for (std::size_t i = 0; i < threads.size(); ++i) {
    list.push_back({{"index", i},
                    {"tid", threads[i].tid},
                    {"name", threads[i].name.empty() ? json(nullptr) : json(threads[i].name)}});
  }
  return ok({{"threads", std::move(list)}});
}

ApiAnswer api_instant(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const std::optional<std::uint64_t> at = request.time("at");
  if (!at) request.refuse(400, "instant needs at=T (ns since the dump's start).");
  const std::optional<SiteSet> found_set = request.sites();
  const AllocationTable* table = request.table();
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const SiteSet& set = *found_set;
  const std::uint64_t at_ns = *at;
  const AllocationTable& t = *table;
  const EventCursor c = cursor_at(t, at_ns);
  const SiteLive live = set_live(set, live_by_site(t, c));
  const auto whole = range_figures(d, TimeWindow{d.start_ns(), std::max(d.end_ns(), d.start_ns())});
  std::vector<SiteFigures> sums;
  const std::vector<SiteFigures>& fig = set_figures(set, whole->sites, sums);
  const SiteValues values{set.sites->sites, fig, &live};
  std::vector<std::size_t> order = ranked(set, values, *find_key("live"), Listed::kNonZero);
  if (order.size() > 20) order.resize(20);
  json top = json::array();
  for (const std::size_t i : order) {
    json row = site_row(set, i, fig[i]);
    row["live_bytes"] = live.bytes[i];
    row["live_count"] = live.count[i];
    top.push_back(std::move(row));
  }
  const auto& rss = d.report.dump.rss;
  const bool has_rss = !rss.empty() && rss.front().time_ns <= at_ns;
  return ok({{"at_ns", at_ns - d.start_ns()},
             {"heap_bytes", c.heap_bytes},
             {"live_count", c.live_count},
             {"rss_bytes", has_rss ? json(*rss_at(d.report.dump, at_ns)) : json(nullptr)},
             {"top", std::move(top)}});
}

}  // namespace memrec::analyzer::server
