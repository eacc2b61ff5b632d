// Builds both reports with the report's own code (reports/heap_report.h),
// compares them (diff/site_diff.h), prints text or JSON, then checks the
// --fail-if thresholds. JSON schema "memrec-diff" version 2: docs/exports.md.
#include "diff/diff_command.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <utility>

#include "common/exit_codes.h"
#include "common/first_use_numbering.h"
#include "common/json_writer.h"
#include "common/size_text.h"
#include "common/time_spec.h"
#include "diff/fail_if.h"
#include "diff/growth_diff.h"
#include "diff/site_diff.h"
#include "reports/growth_ranking.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

using nlohmann::json;

// `prefix` names the flags in messages: "base-" for --base-from, "" for --from.
Result<RelativeWindow> window_of(const std::optional<std::string>& from, const std::optional<std::string>& to,
                                 std::string_view prefix) {
  RelativeWindow w;
  if (from) {
    auto t = parse_time_point(*from);
    if (!t) return Error{ErrorCode::kUsage, fmt::format("diff: --{}from {}", prefix, t.error().message)};
    w.from_ns = t->ns;
    w.from_mark = t->mark;
  }
  if (to) {
    auto t = parse_time_point(*to);
    if (!t) return Error{ErrorCode::kUsage, fmt::format("diff: --{}to {}", prefix, t.error().message)};
    if (!t->mark) w.to_ns = t->ns;
    w.to_mark = t->mark;
  }
  // Marks are compared once resolved, per dump (resolve_window).
  if (!w.from_mark && !w.to_mark && w.to_ns && *w.to_ns < w.from_ns)
    return Error{ErrorCode::kUsage, fmt::format("diff: --{}to {} is before --{}from {}", prefix, *to, prefix, *from)};
  return w;
}

// BASE's and NEW's windows: from the ranges (one for both sides, or one
// each) or from the per-side flags; one dump must be given two ranges.
Result<std::pair<RelativeWindow, RelativeWindow>> windows_of(const DiffOptions& o) {
  const bool per_side = o.base_from || o.base_to || o.new_from || o.new_to;
  if (!o.ranges.empty() && per_side) {
    return Error{ErrorCode::kUsage,
                 "diff: give --from/--to ranges or --base-from/--base-to/--new-from/--new-to, not both"};
  }
  if (o.ranges.size() > 2) {
    return Error{
        ErrorCode::kUsage,
        fmt::format("diff: {} --from/--to ranges given; a diff compares two (BASE's, then NEW's)", o.ranges.size())};
  }
  if (o.files.size() == 1 && o.ranges.size() == 1) {
    return Error{ErrorCode::kUsage,
                 "diff: one dump needs two ranges to compare: --from A --to B --from C --to D (BASE, then NEW)"};
  }
  if (per_side) {
    auto base = window_of(o.base_from, o.base_to, "base-");
    if (!base) return base.error();
    auto next = window_of(o.new_from, o.new_to, "new-");
    if (!next) return next.error();
    return std::pair{*base, *next};
  }
  if (o.ranges.empty()) return std::pair{RelativeWindow{}, RelativeWindow{}};
  auto base = window_of(o.ranges.front().from, o.ranges.front().to, "");
  if (!base) return base.error();
  auto next = window_of(o.ranges.back().from, o.ranges.back().to, "");
  if (!next) return next.error();
  return std::pair{*base, *next};
}

std::string seconds(std::uint64_t ns) { return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9); }

// A side's name in the text: the file, and its range when it has one.
std::string side_text(const HeapReport& r) {
  if (r.window.from_ns == 0 && !r.window.to_ns) return r.dump.path;
  return fmt::format("{} [{} to {}]", r.dump.path, seconds(r.window.from_ns),
                     r.window.to_ns ? seconds(*r.window.to_ns) : std::string("the end"));
}

const char* change_name(SiteChange c) {
  switch (c) {
    case SiteChange::kChanged:
      return "changed";
    case SiteChange::kNew:
      return "new";
    case SiteChange::kVanished:
      return "vanished";
  }
  return "?";
}

json figures_json(const DiffFigures& f) {
  return {{"peak_bytes", f.peak_bytes},           {"leaked_bytes", f.leaked_bytes}, {"leaked_count", f.leaked_count},
          {"allocated_bytes", f.allocated_bytes}, {"allocations", f.allocations},   {"temporary", f.temporary}};
}

json change_json(const DiffFigures& b, const DiffFigures& n) {
  return {{"peak_bytes", change_of(b.peak_bytes, n.peak_bytes)},
          {"leaked_bytes", change_of(b.leaked_bytes, n.leaked_bytes)},
          {"leaked_count", change_of(b.leaked_count, n.leaked_count)},
          {"allocated_bytes", change_of(b.allocated_bytes, n.allocated_bytes)},
          {"allocations", change_of(b.allocations, n.allocations)},
          {"temporary", change_of(b.temporary, n.temporary)}};
}

json side_json(const HeapReport& r) {
  return {
      {"file", r.dump.path},
      {"pid", r.dump.header.pid},
      {"window", {{"from_ns", r.window.from_ns}, {"to_ns", r.window.to_ns ? json(*r.window.to_ns) : json(nullptr)}}}};
}

// A site's members naming it: runtime, its frames (as indices), its label.
void write_site_frames(JsonWriter& w, const HeapDiff& d, const SiteDiff& s, const FirstUseNumbering& frames) {
  w.key("runtime");
  w.value(s.runtime);
  w.key("frames");
  w.begin_array();
  for (const std::uint32_t f : s.frames) w.value(frames[f]);
  w.end_array();
  const std::string via = s.frames.empty() ? std::string() : diff_site_via(d, s);
  w.members(json{{"label_frame", s.frames.empty() ? json(nullptr) : json(s.label_frame)},
                 {"label", s.frames.empty() ? json(nullptr) : json(diff_site_label(d, s))},
                 {"via", via.empty() ? json(nullptr) : json(via)}});
}

json fit_json(const GrowthFit& f) {
  return {{"slope_bytes_per_minute", f.slope_bytes_per_minute},
          {"r2", f.r2},
          {"net_bytes", f.net_bytes},
          {"grew_share", f.grew_share},
          {"score", f.score}};
}

json growth_window_json(const GrowthRanking& g) {
  return {{"from_ns", g.from_ns}, {"to_ns", g.to_ns}, {"warmup_ns", g.warmup_ns}, {"buckets", g.buckets}};
}

// A growth row's site, written as the changed sites are (frames as indices).
void write_growth_json(JsonWriter& w, const GrowthDiff& g, const FirstUseNumbering& frames) {
  using Layout = JsonWriter::Layout;
  w.begin_object();
  w.key("base");
  w.value(growth_window_json(g.base), Layout::kInline);
  w.key("new");
  w.value(growth_window_json(g.next), Layout::kInline);
  w.key("sites");
  w.begin_array();
  for (const SiteGrowthDiff& row : g.sites) {
    const SiteDiff& s = g.matched.sites[row.site];
    w.begin_object(Layout::kInline);
    write_site_frames(w, g.matched, s, frames);
    w.members(json{{"base", fit_json(row.base)},
                   {"new", fit_json(row.next)},
                   {"change",
                    {{"slope_bytes_per_minute", row.next.slope_bytes_per_minute - row.base.slope_bytes_per_minute},
                     {"score", row.next.score - row.base.score}}}});
    w.end_object();
  }
  w.end_array();
  w.end_object();
}

// The document is written as it is made, and each frame of the listed sites
// once in "frames" (sites point into it), for the reason the report's is
// (reports/report_json.cpp): a diff of two cc1plus runs lists 155,000 sites
// of ~61 frames, which version 1 wrote as 5-field objects of one DOM.
// --growth's sites match the same frames: both diffs intern the same two
// reports' frames.
bool write_diff_json(std::ostream& out, const HeapReport& base, const HeapReport& next, const HeapDiff& d,
                     const GrowthDiff* growth, const json& gates) {
  using Layout = JsonWriter::Layout;
  FirstUseNumbering frames(d.frames.size());
  for (const SiteDiff& s : d.sites) {
    for (const std::uint32_t f : s.frames) frames.use(f);
  }
  if (growth != nullptr) {
    for (const SiteGrowthDiff& row : growth->sites) {
      for (const std::uint32_t f : growth->matched.sites[row.site].frames) frames.use(f);
    }
  }
  JsonWriter w(out);
  w.begin_object();
  w.key("schema");
  w.value("memrec-diff");
  w.key("version");
  w.value(2);
  w.key("base");
  w.value(side_json(base));
  w.key("new");
  w.value(side_json(next));
  w.key("totals");
  w.value(json{{"base", figures_json(d.base_totals)},
               {"new", figures_json(d.next_totals)},
               {"change", change_json(d.base_totals, d.next_totals)}});
  w.key("frames");
  w.begin_array();
  for (const std::uint32_t f : frames.used()) {
    const DiffFrame& frame = d.frames[f];
    w.value(json{{"function", frame.function.empty() ? json(nullptr) : json(frame.function)},
                 {"file", frame.file.empty() ? json(nullptr) : json(frame.file)},
                 {"line", frame.line == 0 ? json(nullptr) : json(frame.line)},
                 {"inlined", frame.inlined},
                 {"label", frame.label}},
            Layout::kInline);
  }
  w.end_array();
  w.key("sites");
  w.begin_array();
  for (const SiteDiff& s : d.sites) {
    w.begin_object(Layout::kInline);
    w.key("status");
    w.value(change_name(s.change));
    write_site_frames(w, d, s, frames);
    w.members(
        json{{"base", figures_json(s.base)}, {"new", figures_json(s.next)}, {"change", change_json(s.base, s.next)}});
    w.end_object();
  }
  w.end_array();
  w.key("growth");
  if (growth == nullptr) {
    w.value(json(nullptr));
  } else {
    write_growth_json(w, *growth, frames);
  }
  w.key("fail_if");
  w.value(gates);
  w.end_object();
  return w.finish();
}

// A site's frames, innermost first, those folded under its label marked.
void append_frames(std::string& out, const HeapDiff& d, const SiteDiff& s) {
  if (!s.frames.empty()) {
    const std::string via = diff_site_via(d, s);
    out += fmt::format("    {}{}{}\n", diff_site_label(d, s), via.empty() ? "" : " via ", via);
  }
  std::uint32_t at = 0;
  for (const std::uint32_t id : s.frames) {
    const DiffFrame& f = d.frames[id];
    const bool folded = at++ < s.label_frame;
    out += "      " + f.label;
    if (!f.file.empty()) out += fmt::format(" ({}:{})", f.file, f.line);
    if (f.inlined) out += " [inlined]";
    if (folded) out += " [library]";
    out += "\n";
  }
}

std::string slope_text(double bytes_per_minute) {
  return signed_size_text(static_cast<std::int64_t>(std::llround(bytes_per_minute))) + "/min";
}

std::string growth_text(const GrowthDiff& g, std::size_t top) {
  const auto window = [](const GrowthRanking& r) {
    return fmt::format("{} to {} after a warm-up of {}", seconds(r.from_ns), seconds(r.to_ns), seconds(r.warmup_ns));
  };
  std::string out =
      fmt::format("\ngrowth of live bytes (BASE from {}; NEW from {}; score = slope x R2 x share grown):\n",
                  window(g.base), window(g.next));
  if (g.sites.empty()) return out + "  no call site's live bytes grew on either side\n";
  for (std::size_t i = 0; i < g.sites.size() && i < top; ++i) {
    const SiteGrowthDiff& row = g.sites[i];
    const SiteDiff& s = g.matched.sites[row.site];
    out += fmt::format("\n  {} -> {} ({}), R2 {:.2f} -> {:.2f}{}\n", slope_text(row.base.slope_bytes_per_minute),
                       slope_text(row.next.slope_bytes_per_minute),
                       slope_text(row.next.slope_bytes_per_minute - row.base.slope_bytes_per_minute), row.base.r2,
                       row.next.r2, s.runtime ? " [runtime]" : "");
    append_frames(out, g.matched, s);
  }
  return out;
}

std::string diff_text(const HeapReport& base, const HeapReport& next, const HeapDiff& d, std::size_t top) {
  std::string out = fmt::format("memrec diff: {} -> {}\n\n", side_text(base), side_text(next));
  out += fmt::format("{:<16}{:>14}{:>14}{:>14}\n", "total", "base", "new", "change");
  const auto row = [&](const char* name, std::uint64_t DiffFigures::*f, bool sizes) {
    const std::uint64_t b = d.base_totals.*f;
    const std::uint64_t n = d.next_totals.*f;
    const std::int64_t c = change_of(b, n);
    out += fmt::format("{:<16}{:>14}{:>14}{:>14}{:>10}\n", name, sizes ? size_text(b) : std::to_string(b),
                       sizes ? size_text(n) : std::to_string(n), sizes ? signed_size_text(c) : signed_count_text(c),
                       percent_text(b, n));
  };
  row("peak", &DiffFigures::peak_bytes, true);
  row("leaked", &DiffFigures::leaked_bytes, true);
  row("leaked blocks", &DiffFigures::leaked_count, false);
  row("allocated", &DiffFigures::allocated_bytes, true);
  row("allocations", &DiffFigures::allocations, false);
  out += "(exact bytes: --json)\n";
  if (d.sites.empty()) {
    out += "\nNo call site changed.\n";
    return out;
  }
  out += fmt::format("\n{} changed", count_of(d.sites.size(), "call site"));
  out += d.sites.size() > top ? fmt::format(" (the first {}):\n", top) : std::string(":\n");
  for (std::size_t i = 0; i < d.sites.size() && i < top; ++i) {
    const SiteDiff& s = d.sites[i];
    const std::int64_t blocks = change_of(s.base.leaked_count, s.next.leaked_count);
    const std::int64_t calls = change_of(s.base.allocations, s.next.allocations);
    out +=
        fmt::format("\n  [{}{}] leaked {} ({} block{}), peak {}, allocated {} ({} call{})\n", change_name(s.change),
                    s.runtime ? ", runtime" : "", signed_size_text(change_of(s.base.leaked_bytes, s.next.leaked_bytes)),
                    signed_count_text(blocks), blocks == 1 || blocks == -1 ? "" : "s",
                    signed_size_text(change_of(s.base.peak_bytes, s.next.peak_bytes)),
                    signed_size_text(change_of(s.base.allocated_bytes, s.next.allocated_bytes)),
                    signed_count_text(calls), calls == 1 || calls == -1 ? "" : "s");
    append_frames(out, d, s);
  }
  return out;
}

}  // namespace

int run_diff(const DiffOptions& options, std::ostream& out, std::ostream& err) {
  if (options.files.empty() || options.files.size() > 2) {
    err << "memrec: diff: give BASE and NEW, or one dump with two ranges: --from A --to B --from C --to D\n";
    return kExitUsage;
  }
  std::vector<Threshold> thresholds;
  for (const std::string& spec : options.fail_if) {
    std::size_t start = 0;
    while (start <= spec.size()) {
      const std::size_t comma = std::min(spec.find(',', start), spec.size());
      auto t = parse_threshold(std::string_view(spec).substr(start, comma - start));
      if (!t) {
        err << "memrec: " << t.error().message << "\n";
        return kExitUsage;
      }
      thresholds.push_back(std::move(*t));
      start = comma + 1;
    }
  }
  const auto windows = windows_of(options);
  if (!windows) {
    err << "memrec: " << windows.error().message << "\n";
    return kExitUsage;
  }
  std::optional<std::uint64_t> warmup;
  if (options.warmup) {
    if (!options.growth) {
      err << "memrec: diff: --warmup applies to --growth only\n";
      return kExitUsage;
    }
    auto t = parse_time_spec(*options.warmup);
    if (!t) {
      err << "memrec: diff: --warmup " << t.error().message << "\n";
      return kExitUsage;
    }
    warmup = *t;
  }
  const RelativeWindow& base_window = windows->first;
  const RelativeWindow& new_window = windows->second;

  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  const std::string& base_path = options.files.front();
  const std::string& new_path = options.files.back();
  std::vector<HeapReport> reports;
  for (const auto& [path, window] : {std::pair{&base_path, &base_window}, std::pair{&new_path, &new_window}}) {
    auto report = build_heap_report(*path, *window, LoadOptions{options.threads, {}}, symbolizer);
    if (!report) {
      err << "memrec: " << report.error().message << "\n";
      return report.error().code == ErrorCode::kInternal ? kExitInternal : kExitBadInput;
    }
    if (report->stopped) {
      err << "memrec: " << report->stopped->message << " (a diff needs the whole dump)\n";
      return kExitBadInput;
    }
    reports.push_back(std::move(*report));
  }
  const std::vector<std::string> all_warnings = symbolizer.warnings();
  for (const std::string& w : std::set<std::string>(all_warnings.begin(), all_warnings.end())) {
    err << "memrec: " << w << "\n";
  }

  std::optional<GrowthDiff> growth;
  if (options.growth) {
    std::vector<AllocationTable> tables;
    for (const HeapReport& r : reports) {
      auto table = allocation_table_of(r, LoadOptions{options.threads, {}});
      if (!table) {
        err << "memrec: diff: " << table.error().message << "\n";
        return table.error().code == ErrorCode::kUsage ? kExitUsage : kExitBadInput;
      }
      tables.push_back(std::move(*table));
    }
    growth = diff_growth(reports[0], tables[0], reports[1], tables[1], warmup);
  }

  const HeapDiff d = diff_reports(reports[0], reports[1]);
  json gates = json::array();
  std::vector<std::string> reasons;
  for (const Threshold& t : thresholds) {
    const auto why = crossed(t, d);
    gates.push_back(
        {{"threshold", t.text}, {"crossed", why.has_value()}, {"reason", why ? json(*why) : json(nullptr)}});
    if (why) reasons.push_back(*why);
  }
  if (options.json) {
    if (!write_diff_json(out, reports[0], reports[1], d, growth ? &*growth : nullptr, gates)) {
      err << "memrec: diff: cannot write the JSON to stdout (closed, or the disk is full)\n";
      return kExitBadInput;
    }
  } else {
    out << diff_text(reports[0], reports[1], d, options.top);
    if (growth) out << growth_text(*growth, options.top);
  }
  out.flush();
  for (const std::string& r : reasons) err << "memrec: diff: threshold crossed: " << r << "\n";
  return reasons.empty() ? kExitOk : kExitThresholdCrossed;
}

}  // namespace memrec::analyzer
