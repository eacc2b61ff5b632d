// The formats of `memrec export`, one file each, all fed the reports that
// export_command built (one per dump, in process-tree order). Each returns the
// bytes to write; none reads a file or prints.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "export/export_metric.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

// Folded stacks, outermost frame first: `main;work;leak_here 12726`, one line
// per call site with a non-zero value (flamegraph.pl, inferno, speedscope).
std::string export_collapsed(const std::vector<const HeapReport*>& reports, ExportMetric metric);

// A gzipped profile.proto (pprof) with four sample types: alloc_objects,
// alloc_space, inuse_objects, inuse_space (inuse: live at the window's end).
std::string export_pprof(const std::vector<const HeapReport*>& reports);

// One sample's values, in the order of the sample types above.
struct PprofValues {
  std::int64_t alloc_objects = 0;
  std::int64_t alloc_space = 0;
  std::int64_t inuse_objects = 0;
  std::int64_t inuse_space = 0;
  bool operator==(const PprofValues&) const = default;
};
struct PprofWindow {
  std::uint64_t time_nanos = 0;  // wall clock, as the profile's time
  std::uint64_t duration_nanos = 0;
  bool default_alloc_space = false;  // else inuse_space (Go's allocs profile: alloc_space)
};
// One dump's profile with `values` by site (memrec view's /debug/pprof: a
// window's figures, or a delta's, negative values included).
std::string export_pprof_values(const HeapReport& report, std::span<const PprofValues> values,
                                const PprofWindow& window);

// valgrind's massif.out: the heap over time, a detailed snapshot at the peak.
// `timeline` is the heap over the whole dump (model/heap_timeline.h), filled by
// build_heap_report; snapshots outside the report's window are left out.
std::string export_massif(const HeapReport& report, const HeapTimeline& timeline);

// A standalone interactive flamegraph (SVG with inline script; no external resources).
std::string export_svg(const std::vector<const HeapReport*>& reports, ExportMetric metric);

// A frame's name in every format: its label (reports/call_sites.h). Inlining is
// not in the name; pprof and heaptrack show it as lines of one address.
std::string export_frame_name(const SiteFrame& frame);

// When several processes are exported into one stack-based file, each
// stack starts with a frame naming its process: `exe (pid N)`.
std::string process_frame_name(const HeapReport& report);

}  // namespace memrec::analyzer
