// `memrec export --format heaptrack`: heaptrack's own (interpreted) data file,
// for heaptrack_print and heaptrack_gui. Unlike the other formats it needs the
// order of events, so it streams the dump itself through the report's
// StackReplay (reusing its live blocks) instead of taking a HeapReport.
#pragma once

#include <string>

#include "load/dump_loader.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

class Symbolizer;

// The whole dump (no window: heaptrack's totals are over the whole run).
// Holds 8 bytes per heap event until the file is written.
Result<std::string> export_heaptrack(const std::string& path, const LoadOptions& load, Symbolizer& symbolizer);

}  // namespace memrec::analyzer
