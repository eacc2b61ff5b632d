// `memrec report`: the summary of one process's dump — run time, counts,
// peak, leaks, temporaries — and its call sites. Built by streaming the
// dump through a StackReplay, then symbolizing the stacks that matter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/dump_loader.h"
#include "load/loaded_dump.h"
#include "load/ordered_events.h"
#include "memrec/reader/result.h"
#include "model/heap_timeline.h"
#include "model/mapping_record.h"
#include "model/retention.h"
#include "model/site_growth.h"
#include "model/stack_replay.h"
#include "reports/call_sites.h"

namespace memrec::analyzer {

// The window as given on the command line, relative to each dump's start.
// A bound given as `mark:LABEL` is resolved against each dump's markers
// (resolve_window), which sets from_ns or to_ns and clears the mark.
struct RelativeWindow {
  std::uint64_t from_ns = 0;
  std::optional<std::uint64_t> to_ns;
  std::optional<std::string> from_mark;  // what follows `mark:`
  std::optional<std::string> to_mark;
};

// `window` with its marks resolved for the dump at `path` starting at
// `start_ns`; kUsage for an unknown marker or a range that ends before it
// starts. Reads the dump's markers only when a bound names one.
Result<RelativeWindow> resolve_window(const RelativeWindow& window, const std::string& path, std::uint64_t start_ns);

struct HeapReport {
  LoadedDump dump;               // metadata only
  std::optional<Error> stopped;  // a corrupt frame ended the read early
  RelativeWindow window;
  HeapTotals totals;
  CallSites sites;
  std::uint64_t duration_ns = 0;
  std::optional<std::uint64_t> rss_at_peak_bytes;  // the last sample at or before the peak
  // Leaked bytes split by call site: the program's and the runtime's own.
  std::uint64_t leaked_bytes = 0;
  std::uint64_t leaked_count = 0;
  std::uint64_t runtime_retained_bytes = 0;
  std::uint64_t runtime_retained_count = 0;
  std::uint64_t peak_runtime_bytes = 0;  // of the peak, held by runtime sites
  std::uint64_t events = 0;
  std::uint64_t max_pending_events = 0;
  std::optional<GrowthRanking> growth;      // report --growth (reports/growth_ranking.h)
  std::optional<RetentionReport> retained;  // report --retained (reports/growth_ranking.h)
  // With a MappingRecord: the call sites of its mapping stacks (their
  // figures are the mappings', MappingRecord::stack_columns).
  CallSites mapping_sites;
};

// With `timeline`, also fills it with the heap after every event and the RSS
// samples (massif's snapshots; memrec view's whole run before its table); it
// must start at the dump's start. With
// `also`, hands it every event in order on a thread of its own (SinkThread),
// tagged with the row the replay found it released (StackReplay::released_row),
// done when this returns; it must not read the replay's state (memrec
// view's allocation table). The tags need a window with no end.
// With `selected`, counts only those allocations (StackReplay; export's filters).
// With `mappings`, fills it with the anonymous mappings (it must start at the
// dump's start) and symbolizes their stacks into `mapping_sites`.
Result<HeapReport> build_heap_report(const std::string& path, const RelativeWindow& window, const LoadOptions& load,
                                     Symbolizer& symbolizer, HeapTimeline* timeline = nullptr,
                                     TaggedEventSink* also = nullptr, const std::vector<bool>* selected = nullptr,
                                     MappingRecord* mappings = nullptr);

// The report of what `replay` took, finished, from `streamed` over
// `window` (relative to the dump's start): build_heap_report's second half,
// and a followed dump's report of what it has read so far
// (reports/followed_report.h). Symbolizes the call sites, or takes `sites`
// when the caller keeps them between reports (reports/followed_sites.h);
// keeps the stacks.
HeapReport assemble_heap_report(StreamedDump streamed, const RelativeWindow& window, const StackReplay& replay,
                                Symbolizer& symbolizer, MappingRecord* mappings = nullptr,
                                const CallSites* sites = nullptr);

// What replay_into read, for checking it against the report of the same file.
struct ReplayedRun {
  std::uint64_t events = 0;
  HeapTotals totals;
  std::optional<Error> stopped;
};

// The pass of build_heap_report(path, {}, load, …, also) without its report:
// no call sites, nothing symbolized. `memrec view` makes it behind a dump it
// already serves, to build the allocation table, with `load.file_bytes` the
// size the report read.
Result<ReplayedRun> replay_into(const std::string& path, const LoadOptions& load, TaggedEventSink& also);

// The dump's start (the monotonic ns that windows are relative to).
Result<std::uint64_t> dump_start_ns(const std::string& path);

// The report holds the whole run: the dump ended (an end record, or the exec
// that replaced the program) and no corrupt frame stopped the read.
bool dump_complete(const HeapReport& report);
// The program exec'd another and the read was not stopped early.
bool ended_by_exec(const HeapReport& report);

// The last RSS sample at or before `time_ns` (the first one if all are later).
std::optional<std::uint64_t> rss_at(const LoadedDump& dump, std::uint64_t time_ns);

// The ranking the report lists sites by.
enum class SiteRanking { kLeaked, kPeak, kAllocated, kAllocations, kTemporary, kRuntimeRetained };
inline constexpr SiteRanking kAllRankings[] = {SiteRanking::kLeaked,    SiteRanking::kPeak,
                                               SiteRanking::kAllocated, SiteRanking::kAllocations,
                                               SiteRanking::kTemporary, SiteRanking::kRuntimeRetained};
const char* ranking_name(SiteRanking ranking);  // its JSON key

// Indices into report.sites.sites: the `top` largest non-zero by `ranking`
// (leaked excludes runtime sites; runtime_retained has only them), ties by
// first frame's label.
std::vector<std::size_t> top_sites(const HeapReport& report, SiteRanking ranking, std::size_t top);

}  // namespace memrec::analyzer
