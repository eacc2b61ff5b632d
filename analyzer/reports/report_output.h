// Writers of `memrec report`: JSON (report_json.cpp, the documented schema)
// and text (report_text.cpp), one process at a time.
#pragma once

#include <cstddef>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/heap_report.h"
#include "reports/process_tree.h"

namespace memrec::analyzer {

// The `memrec report --json` document (docs/analyzer.md) of `reports`, in
// process-tree `order`, each ranking cut to its `top` sites, written to `out`
// as it is made: memory holds the listing's indices, not the document.
// `memrec export --format json` is this with every site. False if `out` failed.
inline constexpr int kReportSchemaVersion = 3;
bool write_report_json(std::ostream& out, const std::vector<HeapReport>& reports, const std::vector<ProcessNode>& order,
                       std::size_t top, const std::set<std::string>& warnings);

// The figures of a report that depend on its window, so `memrec view` can
// answer another range of a loaded dump in the same words (server/view_model.h).
struct WindowedFigures {
  RelativeWindow window;
  HeapTotals totals;
  std::optional<std::uint64_t> rss_at_peak_bytes;
  std::uint64_t leaked_bytes = 0;
  std::uint64_t leaked_count = 0;
  std::uint64_t runtime_retained_bytes = 0;
  std::uint64_t runtime_retained_count = 0;
  std::uint64_t peak_runtime_bytes = 0;
};
WindowedFigures windowed_figures(const HeapReport& report);
// A report's figures, without its call sites, with `figures` for the window.
nlohmann::json report_figures_json(const HeapReport& report, const WindowedFigures& figures);
// The recording's pauses and resumes and the markers, times from the dump's
// start: {"recording": [...], "markers": [{time_ns, label, source}]}.
nlohmann::json instants_json(const HeapReport& report);
// The window's size and lifetime classes (docs/analyzer.md, "Histograms").
nlohmann::json histograms_json(const Histograms& histograms);
// One frame of a call site, and a site's figures without its frames: the
// FRAME and SITE objects of docs/analyzer.md, shared with `memrec view`.
nlohmann::json frame_json(const SiteFrame& frame);
nlohmann::json site_figures_json(const CallSite& site);
// A site's label_frame (its position in the site's frames), label and via
// (site_label.h); null for a site without frames.
nlohmann::json site_label_json(const CallSites& sites, const CallSite& site);

// The text section of one process, every line indented by two spaces per
// depth. `link`: how the process came to be (a fork child's heap starts as
// its parent's, so what it frees unseen was allocated before the fork).
// `histograms`: the size and lifetime classes too (report --histograms).
std::string heap_report_text(const HeapReport& report, std::size_t depth, std::size_t top,
                             ProcessLink link = ProcessLink::kRoot, bool histograms = false);

}  // namespace memrec::analyzer
