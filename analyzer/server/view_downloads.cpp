// /export reloads the dump from its file through `memrec export`'s own code
// (export/export_command.h), so a download is byte for byte the CLI's file;
// the reload costs the dump's load time (twice with filters: the selection's
// first pass), which a download can afford. The filters are the allocation
// table's parameters and the flamegraph's search, each mapped to the export
// option of the same meaning.
// /diff/report is `memrec diff BASE NEW`'s output (diff/diff_command.h) over
// the request's ranges, reloading both files.
#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>
#include <tuple>
#include <variant>

#include "common/exit_codes.h"
#include "diff/diff_command.h"
#include "export/export_command.h"
#include "server/request_resolver.h"
#include "server/view_api.h"
#include "server/view_diff.h"
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

}  // namespace

ApiAnswer api_export(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
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

ApiAnswer api_diff_report(const ViewData& data, const ParamFn& param) {
  Resolver request(data, param);
  const std::optional<DiffRequest> found = request.take(diff_request(data, param, "diff/report"));
  if (request.failed()) return request.failure();
  const DiffRequest& pair = *found;
  const std::string format = param("format").value_or("");
  if (format != "json" && format != "text") {
    return fail(400, "Unknown format '" + format.substr(0, 40) + "': use json or text.");
  }
  DiffOptions options;
  options.files = {pair.base.dump->report.dump.path, pair.next.dump->report.dump.path};
  options.json = format == "json";
  options.debug_dirs = data.export_options.debug_dirs;
  options.threads = data.export_options.threads;
  // The ranges as --base-from/--base-to/--new-from/--new-to, in ns.
  const auto spec = [](const std::optional<std::uint64_t>& ns) {
    return ns ? std::optional<std::string>(std::to_string(*ns) + "ns") : std::nullopt;
  };
  options.base_from = spec(pair.base.from_ns);
  options.base_to = spec(pair.base.to_ns);
  options.new_from = spec(pair.next.from_ns);
  options.new_to = spec(pair.next.to_ns);
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
