// Runs `memrec report FILE...` once main() has parsed the arguments.
#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace memrec::analyzer {

struct ReportOptions {
  std::vector<std::string> files;
  bool json = false;
  std::size_t top = 10;
  std::optional<std::string> from;  // time specs (time_spec.h)
  std::optional<std::string> to;
  std::vector<std::string> debug_dirs;
  unsigned threads = 0;
  bool progress = true;                 // a progress bar if stderr is a terminal
  bool raw_frames = false;              // sites labelled by their innermost frame (site_label.h)
  bool group_by_label = false;          // sites with the same label frame merged
  bool histograms = false;              // the text report adds the size and lifetime classes
  bool growth = false;                  // rank the sites by the growth of their live bytes (reports/growth_ranking.h)
  std::optional<std::string> warmup;    // growth: left out after the range's start (a time spec); default a tenth
  std::optional<std::string> retained;  // "A..B": what was allocated then and is still live at `at`
  std::optional<std::string> at;        // retained: the instant (a time spec); default B
};

// Writes the report of every file that loads (per process, in tree order) to
// `out`, and messages and symbolizer warnings to `err`. Returns kExitOk,
// kExitUsage for a bad --from/--to, kExitBadInput if a file failed or was
// corrupt, kExitInternal on a bug.
int run_report(const ReportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace memrec::analyzer
