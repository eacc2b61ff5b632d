// `memrec export --format heaptrack`: heaptrack's own (interpreted) data file,
// for heaptrack_print and heaptrack_gui. Unlike the other formats it needs the
// order of events, so it streams the dump itself through the report's
// StackReplay (reusing its live blocks) instead of taking a HeapReport.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "load/dump_loader.h"
#include "memrec/reader/result.h"
#include "model/spill_column.h"
#include "reports/call_sites.h"

namespace memrec::analyzer {

class Symbolizer;

// A dump read for heaptrack's file: its call sites, its (size, stack)
// kinds of allocation, and every allocation and matched free in merged
// order as one of those kinds (8 bytes an event, in a spill column: a 2 GB
// dump's billion events took 8 GB of memory, and the file made whole in a
// string 6 GB more).
struct HeaptrackEvent {
  std::uint32_t kind;  // into HeaptrackExport::kinds
  bool alloc;
};
struct HeaptrackKind {
  std::uint64_t size;
  std::uint32_t stack;
};
struct HeaptrackExport {
  LoadedDump dump;  // metadata only
  CallSites sites;
  std::vector<HeaptrackKind> kinds;
  SpillColumn<HeaptrackEvent> events;
};

// The whole dump (no window: heaptrack's totals are over the whole run).
Result<HeaptrackExport> load_heaptrack(const std::string& path, const LoadOptions& load, Symbolizer& symbolizer);
// Writes the file to `out` as it is made, a MiB at a time.
void write_heaptrack(const HeaptrackExport& data, std::ostream& out);

}  // namespace memrec::analyzer
