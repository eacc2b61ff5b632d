// Loads each dump (one at a time: memory holds one dump's window and
// figures), orders them as a process tree and prints them. A file that fails
// does not stop the others; the exit code says that one did.
#include "reports/report_command.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "exit_codes.h"
#include "reports/progress_bar.h"
#include "reports/report_output.h"
#include "reports/site_label.h"
#include "reports/time_spec.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

int exit_code_of(const Error& e) {
  if (e.code == ErrorCode::kInternal) return kExitInternal;
  if (e.code == ErrorCode::kUsage) return kExitUsage;
  return kExitBadInput;
}

Result<RelativeWindow> parse_window(const ReportOptions& o) {
  RelativeWindow w;
  if (o.from) {
    auto t = parse_time_point(*o.from);
    if (!t) return Error{ErrorCode::kUsage, "report: --from " + t.error().message};
    w.from_ns = t->ns;
    w.from_mark = t->mark;
  }
  if (o.to) {
    auto t = parse_time_point(*o.to);
    if (!t) return Error{ErrorCode::kUsage, "report: --to " + t.error().message};
    if (!t->mark) w.to_ns = t->ns;
    w.to_mark = t->mark;
  }
  // Marks are compared once resolved, per dump (resolve_window).
  if (!w.from_mark && !w.to_mark && w.to_ns && *w.to_ns < w.from_ns) {
    return Error{ErrorCode::kUsage, "report: --to is before --from"};
  }
  return w;
}

}  // namespace

int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  const auto window = parse_window(options);
  if (!window) {
    err << "memrec: " << window.error().message << "\n";
    return kExitUsage;
  }
  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  int status = kExitOk;
  std::vector<HeapReport> reports;
  for (const std::string& path : options.files) {
    ProgressBar bar(stderr, options.progress, "loading " + path, ProgressBar::style_for(STDERR_FILENO));
    LoadOptions load{options.threads, [&bar](std::size_t done, std::size_t total) { bar.update(done, total); }};
    auto report = build_heap_report(path, *window, load, symbolizer);
    if (!report) {
      err << "memrec: " << report.error().message << "\n";
      status = std::max(status, exit_code_of(report.error()));
      continue;
    }
    if (report->stopped) {
      err << "memrec: " << report->stopped->message << " (the report covers the frames before it)\n";
      status = std::max(status, kExitBadInput);
    }
    if (options.raw_frames) use_raw_frames(report->sites);
    if (options.group_by_label) report->sites = group_by_label(report->sites);
    reports.push_back(std::move(*report));
  }
  const std::vector<std::string> all_warnings = symbolizer.warnings();
  const std::set<std::string> warnings(all_warnings.begin(), all_warnings.end());
  for (const std::string& w : warnings) err << "memrec: " << w << "\n";

  std::vector<ProcessKey> keys;
  keys.reserve(reports.size());
  for (const HeapReport& r : reports) {
    keys.push_back({r.dump.header.pid, r.dump.header.ppid, r.dump.header.start_mono_ns});
  }
  const std::vector<ProcessNode> order = order_process_tree(keys);
  if (options.json) {
    if (!write_report_json(out, reports, order, options.top, warnings)) {
      err << "memrec: report: cannot write the JSON to stdout (closed, or the disk is full)\n";
      return std::max(status, kExitBadInput);
    }
  } else {
    bool first = true;
    for (const ProcessNode& n : order) {
      if (!first) out << "\n";
      first = false;
      out << heap_report_text(reports[n.input], n.depth, options.top, n.link, options.histograms);
    }
  }
  out.flush();
  return status;
}

}  // namespace memrec::analyzer
