// Loads every dump like `memrec report` does (reports/heap_report.h), then
// hands the reports to one writer. Any failing dump stops the export: a
// profile silently missing a process would mislead.
#include "export/export_command.h"

#include <fstream>
#include <set>

#include "exit_codes.h"
#include "export/export_metric.h"
#include "export/export_writers.h"
#include "export/heaptrack.h"
#include "reports/report_output.h"
#include "reports/time_spec.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

enum class Format { kCollapsed, kPprof, kMassif, kSvg, kJson, kHeaptrack };

std::optional<Format> parse_format(const std::string& name) {
  if (name == "collapsed" || name == "folded") return Format::kCollapsed;
  if (name == "pprof") return Format::kPprof;
  if (name == "massif") return Format::kMassif;
  if (name == "svg" || name == "flamegraph") return Format::kSvg;
  if (name == "json") return Format::kJson;
  if (name == "heaptrack") return Format::kHeaptrack;
  return std::nullopt;
}

std::optional<std::string> parse_window(const ExportOptions& o, RelativeWindow& w) {
  if (o.from) {
    auto t = parse_time_spec(*o.from);
    if (!t) return "export: --from " + t.error().message;
    w.from_ns = *t;
  }
  if (o.to) {
    auto t = parse_time_spec(*o.to);
    if (!t) return "export: --to " + t.error().message;
    w.to_ns = *t;
  }
  if (w.to_ns && *w.to_ns < w.from_ns) return std::string("export: --to is before --from");
  return std::nullopt;
}

Result<std::uint64_t> dump_start_ns(const std::string& path) {
  auto file = reader::MappedFile::open(path);
  if (!file) return file.error();
  auto header = reader::parse_file_header(file->bytes(), path);
  if (!header) return header.error();
  return header->start_mono_ns;
}

// The report --json document (docs/analyzer.md), every site listed.
std::string json_document(const std::vector<HeapReport>& reports, const std::set<std::string>& warnings) {
  std::vector<ProcessKey> keys;
  for (const HeapReport& r : reports)
    keys.push_back({r.dump.header.pid, r.dump.header.ppid, r.dump.header.start_mono_ns});
  nlohmann::json processes = nlohmann::json::array();
  std::size_t top = 0;
  for (const HeapReport& r : reports) top = std::max(top, r.sites.sites.size());
  for (const ProcessNode& n : order_process_tree(keys))
    processes.push_back(process_json(reports[n.input], n, reports, top));
  const nlohmann::json doc = {
      {"schema", "memrec-report"}, {"version", 1}, {"processes", std::move(processes)}, {"warnings", warnings}};
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

int write_output(const ExportOptions& options, const std::string& data, std::ostream& out, std::ostream& err) {
  if (!options.output || *options.output == "-") {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.flush();
    return out ? kExitOk : kExitBadInput;
  }
  std::ofstream file(*options.output, std::ios::binary | std::ios::trunc);
  file.write(data.data(), static_cast<std::streamsize>(data.size()));
  file.close();
  if (!file) {
    err << "memrec: export: cannot write " << *options.output << ": check the directory exists and is writable\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace

ExportResult build_export(const ExportOptions& options) {
  ExportResult res;
  const auto failed = [&res](int code, std::string message) {
    res.exit_code = code;
    res.error = std::move(message);
    return res;
  };
  const auto format = parse_format(options.format);
  if (!format) {
    return failed(kExitUsage, "export: unknown format '" + options.format + "' (one of " + kExportFormats + ")");
  }
  const auto metric = parse_export_metric(options.metric);
  if (!metric) {
    return failed(kExitUsage, "export: unknown metric '" + options.metric + "' (one of " + kExportMetricNames + ")");
  }
  RelativeWindow window;
  if (const auto bad = parse_window(options, window)) return failed(kExitUsage, *bad);
  if ((*format == Format::kMassif || *format == Format::kHeaptrack) && options.files.size() != 1) {
    return failed(kExitUsage, "export: " + options.format + " describes one process: give one dump");
  }
  if (*format == Format::kHeaptrack && (options.from || options.to)) {
    return failed(kExitUsage, "export: heaptrack files cover the whole run: --from/--to do not apply");
  }
  const auto filter = parse_export_filter(options.filter);
  if (!filter) return failed(kExitUsage, filter.error().message);
  if (filter->any && *format == Format::kHeaptrack) {
    return failed(kExitUsage, "export: heaptrack files hold every allocation: the filters do not apply");
  }
  if (filter->per_dump && options.files.size() != 1) {
    return failed(kExitUsage, "export: --thread-index and --site name one dump's thread or site: give one dump");
  }

  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  const auto collect_warnings = [&] {
    const std::vector<std::string> all = symbolizer.warnings();
    const std::set<std::string> unique(all.begin(), all.end());
    res.warnings.assign(unique.begin(), unique.end());
    return unique;
  };
  if (*format == Format::kHeaptrack) {
    auto data = export_heaptrack(options.files.front(), LoadOptions{options.threads, {}}, symbolizer);
    if (!data)
      return failed(data.error().code == ErrorCode::kInternal ? kExitInternal : kExitBadInput, data.error().message);
    collect_warnings();
    res.data = std::move(*data);
    return res;
  }
  const auto exit_code_of = [](const Error& e) {
    return e.code == ErrorCode::kInternal ? kExitInternal : e.code == ErrorCode::kUsage ? kExitUsage : kExitBadInput;
  };
  const LoadOptions load{options.threads, {}};
  std::vector<HeapReport> reports;
  std::optional<HeapTimeline> timeline;  // massif's snapshots
  for (const std::string& path : options.files) {
    std::optional<std::vector<bool>> selected;
    if (filter->any) {
      auto rows = select_allocations(path, *filter, window, load, symbolizer);
      if (!rows) return failed(exit_code_of(rows.error()), rows.error().message);
      selected = std::move(*rows);
    }
    if (*format == Format::kMassif) {
      auto start = dump_start_ns(path);
      if (!start) return failed(kExitBadInput, start.error().message);
      timeline.emplace(*start);
    }
    auto report = build_heap_report(path, window, load, symbolizer, timeline ? &*timeline : nullptr, nullptr,
                                    selected ? &*selected : nullptr);
    if (!report) return failed(exit_code_of(report.error()), report.error().message);
    if (report->stopped) return failed(kExitBadInput, report->stopped->message + " (nothing exported)");
    reports.push_back(std::move(*report));
  }
  const std::set<std::string> warnings = collect_warnings();

  std::vector<const HeapReport*> ptrs;
  for (const HeapReport& r : reports) ptrs.push_back(&r);
  switch (*format) {
    case Format::kCollapsed:
      res.data = export_collapsed(ptrs, *metric);
      break;
    case Format::kPprof:
      res.data = export_pprof(ptrs);
      if (res.data.empty()) return failed(kExitInternal, "export: gzip compression failed (out of memory?)");
      break;
    case Format::kMassif:
      res.data = export_massif(reports.front(), *timeline);
      break;
    case Format::kSvg:
      res.data = export_svg(ptrs, *metric);
      break;
    case Format::kJson:
      res.data = json_document(reports, warnings);
      break;
    case Format::kHeaptrack:
      break;  // written above
  }
  return res;
}

int run_export(const ExportOptions& options, std::ostream& out, std::ostream& err) {
  const ExportResult res = build_export(options);
  for (const std::string& w : res.warnings) err << "memrec: " << w << "\n";
  if (res.exit_code != kExitOk) {
    err << "memrec: " << res.error << "\n";
    return res.exit_code;
  }
  return write_output(options, res.data, out, err);
}

}  // namespace memrec::analyzer
