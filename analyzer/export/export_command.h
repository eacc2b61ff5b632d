// Runs `memrec export FILE... --format F [-o OUT] [--metric M] [--from T] [--to T]`
// and the filters once main() has parsed the arguments: builds each dump's
// HeapReport (the report's own replay and call sites; with filters, of the
// selected allocations only) and writes it in another tool's format.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "export/allocation_selection.h"

namespace memrec::analyzer {

struct ExportOptions {
  std::vector<std::string> files;
  std::string format;                 // collapsed, pprof, massif, svg, json
  std::optional<std::string> output;  // a path; stdout when absent or "-"
  std::string metric = "allocated";   // export_metric.h
  std::optional<std::string> from;    // time specs (common/time_spec.h)
  std::optional<std::string> to;
  ExportFilterOptions filter;  // which allocations count (allocation_selection.h)
  std::vector<std::string> debug_dirs;
  unsigned threads = 0;
  bool raw_frames = false;  // keep library frames as leaves (reports/site_label.h)
};

// The formats, for --help.
inline constexpr const char* kExportFormats = "collapsed, pprof, massif, svg, json, heaptrack";

// The bytes `memrec export` would write, without writing them (memrec view's
// downloads reload the dump through this): `exit_code` kExitOk with `data`,
// or another code with `error` (a sentence without the "memrec: " prefix).
struct ExportResult {
  int exit_code = 0;
  std::string data;
  std::string error;
  std::vector<std::string> warnings;  // the symbolizer's, once each, sorted
};
ExportResult build_export(const ExportOptions& options);

// Exit codes: kExitOk; kExitUsage for an unknown format or metric, a bad
// --from/--to or filter, a thread or site the dump does not have, several
// files for a one-process format or a one-dump filter; kExitBadInput when a
// dump is missing or corrupt (nothing is written then) or OUT cannot be written.
int run_export(const ExportOptions& options, std::ostream& out, std::ostream& err);

}  // namespace memrec::analyzer
