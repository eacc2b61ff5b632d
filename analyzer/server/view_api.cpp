// Builds the API's JSON. Names from the dump (functions, files, command
// lines) go out as JSON strings only; the page puts them in as text.
#include "server/view_api.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <map>
#include <string_view>
#include <tuple>
#include <variant>

#include "reports/info_report.h"
#include "reports/report_output.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxIdDigits = 9;
constexpr std::uint64_t kDefaultLimit = 100;
constexpr std::uint64_t kMaxLimit = 1000;

ApiAnswer fail(int status, std::string message) { return {json(nullptr), ApiError{status, std::move(message)}}; }

// A decimal number without sign or spaces, at most `max`.
std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.size() > 12) return std::nullopt;
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

// The dump named by a path segment, or why not.
std::variant<const ViewDump*, ApiError> find_dump(const ViewData& data, const std::string& id) {
  if (id.size() > kMaxIdDigits) return ApiError{400, "The dump id is too long."};
  const auto n = parse_count(id, ~0ull);
  if (!n) return ApiError{400, "The dump id must be a number."};
  if (*n >= data.dumps.size()) return ApiError{404, "No dump has id " + id + "."};
  return &data.dumps[*n];
}

struct SortKey {
  std::string_view name;
  std::uint64_t (*value)(const CallSite&);
};
constexpr std::array<SortKey, 7> kSortKeys = {{
    {"leaked", [](const CallSite& s) { return s.runtime ? 0 : s.leaked_bytes; }},
    {"count", [](const CallSite& s) { return s.runtime ? 0 : s.leaked_count; }},
    {"peak", [](const CallSite& s) { return s.peak_bytes; }},
    {"allocated", [](const CallSite& s) { return s.allocated_bytes; }},
    {"allocations", [](const CallSite& s) { return s.allocations; }},
    {"temporary", [](const CallSite& s) { return s.temporary; }},
    {"retained", [](const CallSite& s) { return s.runtime ? s.leaked_bytes : 0; }},
}};

std::string sort_names() {
  std::string out;
  for (const SortKey& k : kSortKeys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

struct FlameNode {
  std::string name;
  std::uint64_t value = 0;
  std::map<std::string, std::uint32_t> children;  // by name: a stable, sorted order
};

json flame_json(const std::vector<FlameNode>& nodes, std::uint32_t at, std::uint64_t min_value, std::uint64_t& pruned) {
  const FlameNode& n = nodes[at];
  json children = json::array();
  for (const auto& [name, child] : n.children) {
    if (nodes[child].value < min_value) {
      ++pruned;
      continue;
    }
    children.push_back(flame_json(nodes, child, min_value, pruned));
  }
  return {{"name", n.name}, {"value", n.value}, {"children", std::move(children)}};
}

}  // namespace

ApiAnswer api_dumps(const ViewData& data) {
  json list = json::array();
  for (std::size_t i = 0; i < data.dumps.size(); ++i) {
    const HeapReport& r = data.dumps[i].report;
    list.push_back({{"id", i},
                    {"file", r.dump.path},
                    {"pid", r.dump.header.pid},
                    {"ppid", r.dump.header.ppid},
                    {"exe", r.dump.header.exe_path},
                    {"cmdline", r.dump.header.cmdline},
                    {"start_wall_ns", r.dump.header.start_wall_ns}});
  }
  return {{{"dumps", std::move(list)}, {"warnings", data.warnings}}, std::nullopt};
}

ApiAnswer api_summary(const ViewData& data, const std::string& dump_id) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return {json(nullptr), *e};
  const HeapReport& r = std::get<const ViewDump*>(found)->report;
  json body = heap_report_json(r, 0);  // the report's figures; sites come from /sites
  body.erase("sites");
  body["pid"] = r.dump.header.pid;
  body["exe"] = r.dump.header.exe_path;
  body["cmdline"] = r.dump.header.cmdline;
  body["sites_total"] = r.sites.sites.size();
  json counters = json::object();
  for (const auto& [key, value] : r.dump.facts.counters) counters[counter_name(key)] = value;
  body["counters"] = std::move(counters);
  return {std::move(body), std::nullopt};
}

ApiAnswer api_timeline(const ViewData& data, const std::string& dump_id) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return {json(nullptr), *e};
  const HeapTimeline& t = std::get<const ViewDump*>(found)->timeline;
  json time = json::array(), heap = json::array(), heap_max = json::array(), count = json::array(), rss = json::array();
  const std::vector<TimelineBucket> buckets = t.buckets();
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    const TimelineBucket& b = buckets[i];
    time.push_back(i * t.bucket_ns());
    heap.push_back(b.heap_bytes);
    heap_max.push_back(b.heap_max_bytes);
    count.push_back(b.live_count);
    rss.push_back(b.rss_bytes ? json(*b.rss_bytes) : json(nullptr));
  }
  return {{{"bucket_ns", t.bucket_ns()},
           {"time_ns", std::move(time)},
           {"heap_bytes", std::move(heap)},
           {"heap_max_bytes", std::move(heap_max)},
           {"live_count", std::move(count)},
           {"rss_bytes", std::move(rss)}},
          std::nullopt};
}

ApiAnswer api_sites(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return {json(nullptr), *e};
  const HeapReport& r = std::get<const ViewDump*>(found)->report;

  const std::string sort = param("sort").value_or("leaked");
  const auto key = std::find_if(kSortKeys.begin(), kSortKeys.end(), [&](const SortKey& k) { return k.name == sort; });
  if (key == kSortKeys.end()) {
    return fail(400, "Unknown sort '" + sort.substr(0, 40) + "': use one of " + sort_names() + ".");
  }
  std::uint64_t offset = 0;
  if (const auto text = param("offset")) {
    const auto n = parse_count(*text, 1ull << 32);
    if (!n) return fail(400, "offset must be a whole number up to 4294967296.");
    offset = *n;
  }
  std::uint64_t limit = kDefaultLimit;
  if (const auto text = param("limit")) {
    const auto n = parse_count(*text, kMaxLimit);
    if (!n || *n == 0) return fail(400, "limit must be a whole number from 1 to 1000.");
    limit = *n;
  }

  const auto& sites = r.sites.sites;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (key->value(sites[i]) != 0) order.push_back(i);
  }
  const auto label = [&](std::size_t i) {
    return sites[i].frames.empty() ? std::string() : frame_label(r.sites.frames[sites[i].frames[0]]);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const std::uint64_t va = key->value(sites[a]);
    const std::uint64_t vb = key->value(sites[b]);
    if (va != vb) return va > vb;
    const std::string la = label(a);
    const std::string lb = label(b);
    return std::tie(la, a) < std::tie(lb, b);
  });

  json rows = json::array();
  for (std::uint64_t i = offset; i < order.size() && i < offset + limit; ++i) {
    const CallSite& s = sites[order[i]];
    json row = site_figures_json(s);
    row["id"] = order[i];
    row["top"] = s.frames.empty() ? json(nullptr) : frame_json(r.sites.frames[s.frames[0]]);
    row["depth"] = s.frames.size();
    rows.push_back(std::move(row));
  }
  return {{{"sort", sort}, {"offset", offset}, {"limit", limit}, {"total", order.size()}, {"sites", std::move(rows)}},
          std::nullopt};
}

ApiAnswer api_flame(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return {json(nullptr), *e};
  const HeapReport& r = std::get<const ViewDump*>(found)->report;
  const std::string metric = param("metric").value_or("leaked");
  const auto key = std::find_if(kSortKeys.begin(), kSortKeys.end(), [&](const SortKey& k) { return k.name == metric; });
  if (key == kSortKeys.end() || metric == "count" || metric == "retained") {
    return fail(400, "Unknown metric '" + metric.substr(0, 40) +
                         "': use one of leaked, peak, allocated, allocations, temporary.");
  }
  std::vector<FlameNode> nodes(1);
  nodes[0].name = "all";
  for (const CallSite& s : r.sites.sites) {
    const std::uint64_t v = key->value(s);
    if (v == 0) continue;
    nodes[0].value += v;
    std::uint32_t at = 0;
    for (auto f = s.frames.rbegin(); f != s.frames.rend(); ++f) {  // outermost first
      std::string name = frame_label(r.sites.frames[*f]);
      const auto it = nodes[at].children.find(name);
      std::uint32_t child = 0;
      if (it == nodes[at].children.end()) {
        child = static_cast<std::uint32_t>(nodes.size());
        nodes[at].children.emplace(name, child);
        nodes.push_back(FlameNode{std::move(name), 0, {}});
      } else {
        child = it->second;
      }
      nodes[child].value += v;
      at = child;
    }
  }
  std::uint64_t pruned = 0;
  json root = flame_json(nodes, 0, nodes[0].value / 2000, pruned);
  return {{{"metric", metric}, {"total", nodes[0].value}, {"pruned", pruned}, {"root", std::move(root)}}, std::nullopt};
}

ApiAnswer api_site(const ViewData& data, const std::string& dump_id, const std::string& site_id) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return {json(nullptr), *e};
  const HeapReport& r = std::get<const ViewDump*>(found)->report;
  if (site_id.size() > kMaxIdDigits) return fail(400, "The site id is too long.");
  const auto n = parse_count(site_id, ~0ull);
  if (!n) return fail(400, "The site id must be a number.");
  if (*n >= r.sites.sites.size()) return fail(404, "No call site has id " + site_id + ".");
  const CallSite& s = r.sites.sites[*n];
  json body = site_figures_json(s);
  body["id"] = *n;
  json frames = json::array();
  for (const std::uint32_t f : s.frames) frames.push_back(frame_json(r.sites.frames[f]));
  body["frames"] = std::move(frames);
  return {std::move(body), std::nullopt};
}

}  // namespace memrec::analyzer::server
