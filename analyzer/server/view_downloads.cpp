// /export reloads the dump from its file through `memrec export`'s own code
// (export/export_command.h), so a download is byte for byte the CLI's file;
// the reload costs the dump's load time (twice with filters: the selection's
// first pass), which a download can afford. The filters are the allocation
// table's parameters and the flamegraph's search, each mapped to the export
// option of the same meaning.
// /diff/flame merges two dumps' flamegraphs by frame label; /diff/report is
// `memrec diff BASE NEW`'s output (diff/diff_command.h), reloading both files.
#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>
#include <tuple>
#include <variant>

#include "diff/diff_command.h"
#include "exit_codes.h"
#include "export/export_command.h"
#include "reports/flame_tree.h"
#include "server/view_api.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

struct FormatInfo {
  std::string_view name;
  std::string_view extension;
  std::string_view content_type;
};
constexpr std::array<FormatInfo, 6> kFormats = {{
    {"pprof", "pb.gz", "application/gzip"},
    {"collapsed", "folded", "text/plain; charset=utf-8"},
    {"svg", "svg", "image/svg+xml"},
    {"massif", "massif", "text/plain; charset=utf-8"},
    {"heaptrack", "heaptrack", "application/octet-stream"},
    {"json", "json", "application/json; charset=utf-8"},
}};

// The file name without directory and `.dat`, safe inside a quoted header value.
std::string dump_stem(const std::string& path) {
  std::string name = path.substr(path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1);
  if (name.size() > 4 && name.ends_with(".dat")) name.resize(name.size() - 4);
  for (char& c : name) {
    const bool plain =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
    if (!plain) c = '_';
  }
  return name.empty() ? std::string("memrec") : name;
}

using DiffTree = FlameTree<2>;  // value[0] the base, value[1] the new dump

std::uint64_t flame_value(const CallSite& s, std::string_view metric) {
  if (metric == "leaked") return s.runtime ? 0 : s.leaked_bytes;
  if (metric == "peak") return s.peak_bytes;
  if (metric == "allocated") return s.allocated_bytes;
  if (metric == "allocations") return s.allocations;
  return s.temporary;
}

void add_sites(DiffTree& tree, const CallSites& cs, std::string_view metric, std::size_t slot) {
  for (const CallSite& s : cs.sites) {
    const std::uint64_t v = flame_value(s, metric);
    if (v != 0) tree.add(cs, s, v, slot);
  }
}

json diff_json(const DiffTree& tree, std::uint32_t at, std::uint64_t min_value, std::uint64_t& pruned) {
  json children = json::array();
  for (const std::uint32_t child : tree.children(at)) {
    if (std::max(tree.node(child).value[0], tree.node(child).value[1]) < min_value) {
      ++pruned;
      continue;
    }
    children.push_back(diff_json(tree, child, min_value, pruned));
  }
  const DiffTree::Node& n = tree.node(at);
  json node = {{"name", tree.name(at)}, {"base", n.value[0]}, {"new", n.value[1]}, {"children", std::move(children)}};
  put_short_name(node, tree.name(at));
  return node;
}

}  // namespace

ApiAnswer api_export(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return fail(*e);
  const ViewDump& d = *std::get<const ViewDump*>(found);
  const std::string format = param("format").value_or("");
  const auto info =
      std::find_if(kFormats.begin(), kFormats.end(), [&](const FormatInfo& f) { return f.name == format; });
  if (info == kFormats.end()) {
    return fail(400, "Unknown format '" + format.substr(0, 40) +
                         "': use one of pprof, collapsed, svg, massif, heaptrack, json.");
  }
  ExportOptions options;
  options.files = {d.report.dump.path};
  options.format = format;
  options.metric = param("metric").value_or("allocated");
  options.debug_dirs = data.export_options.debug_dirs;
  options.threads = data.export_options.threads;
  ExportFilterOptions& filter = options.filter;
  // (parameter, export option, suffix): times are ns on the wire, counts and sizes plain numbers.
  const std::tuple<const char*, std::optional<std::string>*, const char*> numbers[] = {
      {"from", &options.from, "ns"},
      {"to", &options.to, "ns"},
      {"alive_at", &filter.alive_at, "ns"},
      {"min_life_ns", &filter.min_lifetime, "ns"},
      {"max_life_ns", &filter.max_lifetime, "ns"},
      {"min_size", &filter.min_size, ""},
      {"max_size", &filter.max_size, ""},
      {"thread", &filter.thread_index, ""},
      {"site", &filter.site, ""},
  };
  for (const auto& [name, into, suffix] : numbers) {
    if (const auto text = param(name)) {
      if (!parse_count(*text, ~0ull)) return fail(400, std::string(name) + " must be a whole number.");
      *into = *text + suffix;
    }
  }
  filter.match = param("match");
  filter.search = param("search");
  if (const auto leaked = param("leaked")) {
    if (*leaked != "0" && *leaked != "1") return fail(400, "leaked must be 0 or 1.");
    filter.leaked_only = *leaked == "1";
  }
  ExportResult res = build_export(options);
  if (res.exit_code == kExitUsage) return fail(400, res.error + ".");
  if (res.exit_code != kExitOk) return fail(res.exit_code == kExitBadInput ? 409 : 500, res.error + ".");
  ApiAnswer answer;
  answer.file = ApiFile{std::move(res.data), std::string(info->content_type),
                        dump_stem(d.report.dump.path) + "." + std::string(info->extension)};
  return answer;
}

namespace {

// The `base` and `new` dumps a diff endpoint names, with their ids.
struct DiffPair {
  const ViewDump* base = nullptr;
  const ViewDump* next = nullptr;
  std::uint64_t base_id = 0;
  std::uint64_t new_id = 0;
};

std::variant<DiffPair, ApiError> diff_pair(const ViewData& data, const ParamFn& param, std::string_view endpoint) {
  const auto base_id = param("base");
  const auto new_id = param("new");
  if (!base_id || !new_id) {
    return ApiError{400, std::string(endpoint) + " needs base=ID and new=ID (dump ids from /api/dumps)."};
  }
  const auto base = find_dump(data, *base_id);
  if (const auto* e = std::get_if<ApiError>(&base)) return *e;
  const auto next = find_dump(data, *new_id);
  if (const auto* e = std::get_if<ApiError>(&next)) return *e;
  return DiffPair{std::get<const ViewDump*>(base), std::get<const ViewDump*>(next), std::stoull(*base_id),
                  std::stoull(*new_id)};
}

}  // namespace

ApiAnswer api_diff_flame(const ViewData& data, const ParamFn& param) {
  const auto found = diff_pair(data, param, "diff/flame");
  if (const auto* e = std::get_if<ApiError>(&found)) return fail(*e);
  const DiffPair& pair = std::get<DiffPair>(found);
  const std::string metric = param("metric").value_or("leaked");
  if (metric != "leaked" && metric != "peak" && metric != "allocated" && metric != "allocations" &&
      metric != "temporary") {
    return fail(400, "Unknown metric '" + metric.substr(0, 40) +
                         "': use one of leaked, peak, allocated, allocations, temporary.");
  }
  const auto options = site_options(param);
  if (const auto* e = std::get_if<ApiError>(&options)) return fail(*e);
  // As /flame: ?raw=1 keeps the library leaves; ?group=label changes no flamegraph.
  const SiteOptions naming{std::get<SiteOptions>(options).raw, false};
  DiffTree tree;
  add_sites(tree, *site_set(*pair.base, naming).sites, metric, 0);
  add_sites(tree, *site_set(*pair.next, naming).sites, metric, 1);
  tree.sort_children();
  const auto& root_node = tree.node(0);
  std::uint64_t pruned = 0;
  json root = diff_json(tree, 0, std::max(root_node.value[0], root_node.value[1]) / 2000, pruned);
  return ok({{"metric", metric},
             {"base", pair.base_id},
             {"new", pair.new_id},
             {"base_total", root_node.value[0]},
             {"new_total", root_node.value[1]},
             {"pruned", pruned},
             {"root", std::move(root)}});
}

ApiAnswer api_diff_report(const ViewData& data, const ParamFn& param) {
  const auto found = diff_pair(data, param, "diff/report");
  if (const auto* e = std::get_if<ApiError>(&found)) return fail(*e);
  const DiffPair& pair = std::get<DiffPair>(found);
  const std::string format = param("format").value_or("");
  if (format != "json" && format != "text") {
    return fail(400, "Unknown format '" + format.substr(0, 40) + "': use json or text.");
  }
  DiffOptions options;
  options.files = {pair.base->report.dump.path, pair.next->report.dump.path};
  options.json = format == "json";
  options.debug_dirs = data.export_options.debug_dirs;
  options.threads = data.export_options.threads;
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_diff(options, out, err);
  if (code != kExitOk) {
    std::string message = err.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return fail(code == kExitBadInput ? 409 : 500, message + ".");
  }
  ApiAnswer answer;
  const std::string stem = dump_stem(options.files[0]) + "-vs-" + dump_stem(options.files[1]);
  answer.file = options.json ? ApiFile{out.str(), "application/json; charset=utf-8", "diff." + stem + ".json"}
                             : ApiFile{out.str(), "text/plain; charset=utf-8", "diff." + stem + ".txt"};
  return answer;
}

}  // namespace memrec::analyzer::server
