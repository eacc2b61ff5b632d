// Loads every dump like `memrec report` does (reports/heap_report.h), then
// hands the reports to one writer. Any failing dump stops the export: a
// profile silently missing a process would mislead.
#include "export/export_command.h"

#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include "common/exit_codes.h"
#include "common/time_spec.h"
#include "export/compressed_output.h"
#include "export/export_metric.h"
#include "export/export_writers.h"
#include "export/heaptrack.h"
#include "load/spill_buffer.h"
#include "reports/report_output.h"
#include "reports/site_label.h"
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
    auto t = parse_time_point(*o.from);
    if (!t) return "export: --from " + t.error().message;
    w.from_ns = t->ns;
    w.from_mark = t->mark;
  }
  if (o.to) {
    auto t = parse_time_point(*o.to);
    if (!t) return "export: --to " + t.error().message;
    if (!t->mark) w.to_ns = t->ns;
    w.to_mark = t->mark;
  }
  // Marks are compared once resolved, per dump (resolve_window).
  if (!w.from_mark && !w.to_mark && w.to_ns && *w.to_ns < w.from_ns) {
    return std::string("export: --to is before --from");
  }
  return std::nullopt;
}

// What build_export loaded, for write_export: the reports (one per dump,
// in command-line order) and what a format needs besides them.
struct LoadedExport {
  Format format = Format::kJson;
  ExportMetric metric = ExportMetric::kAllocated;
  std::vector<HeapReport> reports;
  std::optional<HeapTimeline> timeline;  // massif's snapshots
  std::set<std::string> warnings;
  std::optional<HeaptrackExport> heaptrack;  // what the heaptrack file is written from
};

// Writes the file. The report --json document (docs/analyzer.md) and
// heaptrack's file are written as they are made, every site listed; the
// other formats are made whole first, so a failure (pprof's gzip) writes
// nothing. Returns an error message or nothing.
std::optional<std::string> write_export(const LoadedExport& loaded, std::ostream& out) {
  const auto put = [&out](const std::string& data) {
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
  };
  std::vector<const HeapReport*> ptrs;
  for (const HeapReport& r : loaded.reports) ptrs.push_back(&r);
  switch (loaded.format) {
    case Format::kCollapsed:
      put(export_collapsed(ptrs, loaded.metric));
      break;
    case Format::kPprof: {
      const std::string data = export_pprof(ptrs);
      if (data.empty()) return std::string("export: gzip compression failed (out of memory?)");
      put(data);
      break;
    }
    case Format::kMassif:
      put(export_massif(loaded.reports.front(), *loaded.timeline));
      break;
    case Format::kSvg:
      put(export_svg(ptrs, loaded.metric));
      break;
    case Format::kJson: {
      std::vector<ProcessKey> keys;
      for (const HeapReport& r : loaded.reports)
        keys.push_back({r.dump.header.pid, r.dump.header.ppid, r.dump.header.start_mono_ns});
      const std::size_t every_site = std::numeric_limits<std::size_t>::max();
      write_report_json(out, loaded.reports, order_process_tree(keys), every_site, loaded.warnings);
      break;
    }
    case Format::kHeaptrack:
      write_heaptrack(*loaded.heaptrack, out);
      break;
  }
  out.flush();
  return std::nullopt;
}

// Loads what `options` asks for into `loaded`; a result whose exit_code is
// not kExitOk says why nothing can be written.
ExportResult load_export(const ExportOptions& options, LoadedExport& loaded);

ExportResult load_export(const ExportOptions& options, LoadedExport& loaded) {
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
    std::vector<std::string> all = symbolizer.warnings();
    const std::vector<std::string> spill = spill_warnings();
    all.insert(all.end(), spill.begin(), spill.end());
    const std::set<std::string> unique(all.begin(), all.end());
    res.warnings.assign(unique.begin(), unique.end());
    return unique;
  };
  if (*format == Format::kHeaptrack) {
    auto data = load_heaptrack(options.files.front(), LoadOptions{options.threads, {}}, symbolizer);
    if (!data)
      return failed(data.error().code == ErrorCode::kInternal ? kExitInternal : kExitBadInput, data.error().message);
    loaded.format = *format;
    loaded.heaptrack = std::move(*data);
    loaded.warnings = collect_warnings();
    return res;
  }
  const auto exit_code_of = [](const Error& e) {
    return e.code == ErrorCode::kInternal ? kExitInternal : e.code == ErrorCode::kUsage ? kExitUsage : kExitBadInput;
  };
  const LoadOptions load{options.threads, {}};
  loaded.format = *format;
  loaded.metric = *metric;
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
      loaded.timeline.emplace(*start);
    }
    auto report = build_heap_report(path, window, load, symbolizer, loaded.timeline ? &*loaded.timeline : nullptr,
                                    nullptr, selected ? &*selected : nullptr);
    if (!report) return failed(exit_code_of(report.error()), report.error().message);
    if (report->stopped) return failed(kExitBadInput, report->stopped->message + " (nothing exported)");
    if (options.raw_frames) use_raw_frames(report->sites);
    loaded.reports.push_back(std::move(*report));
  }
  loaded.warnings = collect_warnings();
  return res;
}

}  // namespace

ExportResult build_export(const ExportOptions& options) {
  LoadedExport loaded;
  ExportResult res = load_export(options, loaded);
  if (res.exit_code != kExitOk) return res;
  std::ostringstream out;
  if (const auto error = write_export(loaded, out)) {
    res.exit_code = kExitInternal;
    res.error = *error;
    return res;
  }
  res.data = std::move(out).str();
  return res;
}

// The file is opened only once the dumps have loaded, so a failed export
// leaves no file behind; from then on the JSON goes to it as it is made, and
// a write or compression that fails removes it again: a cut file would read
// as a smaller profile (heaptrack_print reads a bad .zst as 0 allocations).
// OUT's name picks the compression (compressed_output.h); pprof is gzip
// whatever the name, which is what `go tool pprof` reads.
int run_export(const ExportOptions& options, std::ostream& out, std::ostream& err) {
  LoadedExport loaded;
  const ExportResult res = load_export(options, loaded);
  for (const std::string& w : res.warnings) err << "memrec: " << w << "\n";
  if (res.exit_code != kExitOk) {
    err << "memrec: " << res.error << "\n";
    return res.exit_code;
  }
  const bool to_stdout = !options.output || *options.output == "-";
  const std::string name = to_stdout ? std::string("stdout") : *options.output;
  std::ofstream file;
  if (!to_stdout) file.open(name, std::ios::binary | std::ios::trunc);
  std::ostream& sink = to_stdout ? out : file;
  if (!sink) {
    err << "memrec: export: " << sink_error(name).message << "\n";
    return kExitBadInput;
  }
  // Only a regular file this export made is removed: never /dev/full or a pipe.
  const auto failed = [&](const std::string& message, int code) {
    err << "memrec: " << message << "\n";
    std::error_code ignored;  // nothing more to say if it cannot go either
    if (!to_stdout && std::filesystem::is_regular_file(name, ignored)) {
      file.close();
      std::filesystem::remove(name, ignored);
    }
    return code;
  };
  const Compression compression =
      to_stdout || loaded.format == Format::kPprof ? Compression::kNone : compression_for_name(name);
  auto compressed = CompressedOutput::open(compression, sink, name);
  if (!compressed) return failed("export: " + compressed.error().message, kExitInternal);
  if (const auto error = write_export(loaded, (*compressed)->stream())) return failed(*error, kExitInternal);
  if (const Status done = (*compressed)->finish(); !done) {
    const int code = done.error().code == ErrorCode::kIo ? kExitBadInput : kExitInternal;
    return failed("export: " + done.error().message, code);
  }
  if (!to_stdout) file.close();
  return file ? kExitOk : failed("export: " + sink_error(name).message, kExitBadInput);
}

}  // namespace memrec::analyzer
