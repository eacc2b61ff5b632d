// Writers of `memrec report`: JSON (report_json.cpp, the documented schema)
// and text (report_text.cpp), one process at a time.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/heap_report.h"
#include "reports/process_tree.h"

namespace memrec::analyzer {

nlohmann::json heap_report_json(const HeapReport& report, std::size_t top);

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
// heap_report_json without "sites", with `figures` for the window.
nlohmann::json report_figures_json(const HeapReport& report, const WindowedFigures& figures);
// One frame of a call site, and a site's figures without its frames: the
// names of the SITE object in docs/analyzer.md, shared with `memrec view`.
nlohmann::json frame_json(const SiteFrame& frame);
nlohmann::json site_figures_json(const CallSite& site);
// One element of "processes": pid, ppid, exe, the tree position and "report".
nlohmann::json process_json(const HeapReport& report, const ProcessNode& node, const std::vector<HeapReport>& all,
                            std::size_t top);

// The text section of one process, every line indented by two spaces per depth.
std::string heap_report_text(const HeapReport& report, std::size_t depth, std::size_t top);

}  // namespace memrec::analyzer
