// Loads each dump (one at a time: memory holds one dump's window and
// figures), orders them as a process tree and prints them. A file that fails
// does not stop the others; the exit code says that one did.
#include "reports/report_command.h"

#include <unistd.h>

#include <algorithm>
#include <set>

#include "common/exit_codes.h"
#include "common/progress_bar.h"
#include "common/time_spec.h"
#include "reports/growth_ranking.h"
#include "reports/report_output.h"
#include "reports/site_label.h"
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

Result<std::optional<std::uint64_t>> parse_warmup(const ReportOptions& o) {
  if (!o.warmup) return std::optional<std::uint64_t>();
  if (!o.growth) return Error{ErrorCode::kUsage, "report: --warmup applies to --growth only"};
  auto t = parse_time_spec(*o.warmup);
  if (!t) return Error{ErrorCode::kUsage, "report: --warmup " + t.error().message};
  return std::optional<std::uint64_t>(*t);
}

// As given: times or marks, resolved per dump (resolved_span).
struct RetainedSpan {
  TimePoint from;
  TimePoint to;
  std::optional<TimePoint> at;
};

struct ResolvedSpan {
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = 0;
  std::optional<std::uint64_t> at_ns;
};

Result<std::optional<RetainedSpan>> parse_retained(const ReportOptions& o) {
  if (!o.retained) {
    if (o.at) return Error{ErrorCode::kUsage, "report: --at applies to --retained only"};
    return std::optional<RetainedSpan>();
  }
  const std::size_t dots = o.retained->find("..");
  if (dots == std::string::npos) {
    return Error{ErrorCode::kUsage, "report: --retained takes a span FROM..TO (1s..5s), not '" + *o.retained + "'"};
  }
  RetainedSpan span;
  const std::pair<std::string_view, TimePoint*> ends[] = {{std::string_view(*o.retained).substr(0, dots), &span.from},
                                                          {std::string_view(*o.retained).substr(dots + 2), &span.to}};
  for (const auto& [text, into] : ends) {
    auto t = parse_time_point(text);
    if (!t) return Error{ErrorCode::kUsage, "report: --retained " + t.error().message};
    *into = *t;
  }
  if (o.at) {
    auto t = parse_time_point(*o.at);
    if (!t) return Error{ErrorCode::kUsage, "report: --at " + t.error().message};
    span.at = *t;
  }
  return std::optional<RetainedSpan>(span);
}

// The span's marks resolved against one dump's markers, then checked.
Result<ResolvedSpan> resolved_span(const RetainedSpan& span, const HeapReport& r) {
  const auto ns = [&](const TimePoint& p) -> Result<std::uint64_t> {
    if (!p.mark) return p.ns;
    return resolve_mark(*p.mark, r.dump.markers, r.dump.header.start_mono_ns, r.dump.path);
  };
  ResolvedSpan out;
  const auto from = ns(span.from);
  if (!from) return from.error();
  const auto to = ns(span.to);
  if (!to) return to.error();
  out.from_ns = *from;
  out.to_ns = *to;
  if (out.to_ns < out.from_ns) return Error{ErrorCode::kUsage, "report: --retained ends before it starts"};
  if (span.at) {
    const auto at = ns(*span.at);
    if (!at) return at.error();
    if (*at < out.from_ns) return Error{ErrorCode::kUsage, "report: --at is before the --retained span starts"};
    out.at_ns = *at;
  }
  return out;
}

}  // namespace

int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err) {
  const auto window = parse_window(options);
  if (!window) {
    err << "memrec: " << window.error().message << "\n";
    return kExitUsage;
  }
  const auto warmup = parse_warmup(options);
  if (!warmup) {
    err << "memrec: " << warmup.error().message << "\n";
    return kExitUsage;
  }
  const auto retained = parse_retained(options);
  if (!retained) {
    err << "memrec: " << retained.error().message << "\n";
    return kExitUsage;
  }
  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  int status = kExitOk;
  std::vector<HeapReport> reports;
  for (const std::string& path : options.files) {
    ProgressBar bar(stderr, options.progress, "loading " + path, ProgressBar::style_for(STDERR_FILENO));
    LoadOptions load{options.threads, [&bar](std::size_t done, std::size_t total) { bar.update(done, total); }};
    load.load_progress = [&bar](std::size_t done, std::size_t total, const LoadProgress& read) {
      bar.update(done, total, read);
    };
    auto report = build_heap_report(path, *window, load, symbolizer);
    load.load_progress = nullptr;
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
    std::optional<ResolvedSpan> span;
    if (const auto& given = *retained) {
      auto resolved = resolved_span(*given, *report);
      if (!resolved) {
        err << "memrec: " << resolved.error().message << "\n";
        status = std::max(status, exit_code_of(resolved.error()));
        continue;
      }
      span = *resolved;
    }
    if (options.growth || span) {
      ProgressBar second(stderr, options.progress, "indexing the allocations of " + path,
                         ProgressBar::style_for(STDERR_FILENO));
      load.progress = [&second](std::size_t done, std::size_t total) { second.update(done, total); };
      auto table = allocation_table_of(*report, load);
      if (!table) {
        err << "memrec: " << table.error().message << "\n";
        status = std::max(status, exit_code_of(table.error()));
        continue;
      }
      if (options.growth) report->growth = rank_growth(*report, *table, *warmup);
      if (span) report->retained = rank_retained(*report, *table, span->from_ns, span->to_ns, span->at_ns);
    }
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
