// Builds one HeapReport: stream, replay, symbolize, split the runtime's
// retained blocks from the program's leaks.
#include "reports/heap_report.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "common/time_spec.h"
#include "load/free_pages.h"
#include "load/marker_scan.h"
#include "load/ordered_events.h"
#include "load/sink_thread.h"
#include "reports/symbol_prefetch.h"

namespace memrec::analyzer {
namespace {

std::uint64_t site_metric(const CallSite& s, SiteRanking ranking) {
  switch (ranking) {
    case SiteRanking::kLeaked:
      return s.runtime ? 0 : s.leaked_bytes;
    case SiteRanking::kPeak:
      return s.peak_bytes;
    case SiteRanking::kAllocated:
      return s.allocated_bytes;
    case SiteRanking::kAllocations:
      return s.allocations;
    case SiteRanking::kTemporary:
      return s.temporary;
    case SiteRanking::kRuntimeRetained:
      return s.runtime ? s.leaked_bytes : 0;
  }
  return 0;
}

// Hands each event to the replay, then to `also`, tagged with the row the
// replay found it released. Runs and merges go on whole: the replay prefetches
// its live blocks within them, and `also` takes them in one call.
class TaggingTee final : public OrderedEventSink {
 public:
  TaggingTee(StackReplay& replay, TaggedEventSink& also) : replay_(replay), also_(also) {}
  void on_event(const HeapEvent& event, std::uint32_t thread) override { on_events({&event, 1}, thread); }
  void on_events(std::span<const HeapEvent> events, std::uint32_t thread) override {
    released_.resize(events.size());
    replay_.on_events(events, thread, released_);
    also_.on_tagged_events(events, released_, thread);
  }
  void on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads) override {
    released_.resize(events.size());
    replay_.on_merged(events, threads, released_);
    also_.on_tagged_merged(events, released_, threads);
  }

 private:
  StackReplay& replay_;
  TaggedEventSink& also_;
  std::vector<std::uint32_t> released_;
};

}  // namespace

// From the header alone: indexing the frames would fault in a page around
// every frame's envelope.
Result<std::uint64_t> dump_start_ns(const std::string& path) {
  auto file = reader::MappedFile::open(path);
  if (!file) return file.error();
  auto header = reader::parse_file_header(file->bytes(), path);
  if (!header) return header.error();
  return header->start_mono_ns;
}

bool dump_complete(const HeapReport& r) { return r.dump.facts.ended() && !r.stopped; }

bool ended_by_exec(const HeapReport& r) { return r.dump.facts.ended_by_exec() && !r.stopped; }

std::optional<std::uint64_t> rss_at(const LoadedDump& d, std::uint64_t time_ns) {
  std::optional<std::uint64_t> best;
  for (const reader::RssRecord& r : d.rss) {
    if (r.time_ns <= time_ns || !best) best = r.rss_bytes;
    if (r.time_ns > time_ns) break;
  }
  return best;
}

const char* ranking_name(SiteRanking ranking) {
  switch (ranking) {
    case SiteRanking::kLeaked:
      return "leaked";
    case SiteRanking::kPeak:
      return "peak";
    case SiteRanking::kAllocated:
      return "allocated";
    case SiteRanking::kAllocations:
      return "allocations";
    case SiteRanking::kTemporary:
      return "temporary";
    case SiteRanking::kRuntimeRetained:
      return "runtime_retained";
  }
  return "?";
}

namespace {

// The pass of both build_heap_report and replay_into: every event through
// `replay`, then to `timeline` and to `also` (on a thread of its own); with a
// symbolizer, the modules' debug files open while the events still stream
// (symbol_prefetch.h).
Result<StreamedDump> replay_dump(const std::string& path, const LoadOptions& load, StackReplay& replay,
                                 Symbolizer* symbolizer, HeapTimeline* timeline, TaggedEventSink* also) {
  std::optional<SinkThread> also_thread;
  std::optional<TaggingTee> tee;
  if (also != nullptr) {
    also_thread.emplace(*also);
    tee.emplace(replay, *also_thread);
  }
  replay.set_timeline(timeline);
  std::optional<SymbolPrefetch> prefetch;
  LoadOptions options = load;
  if (symbolizer != nullptr) {
    prefetch.emplace(*symbolizer);
    options.on_addresses = [&prefetch](std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses) {
      prefetch->add(modules, addresses);
    };
  }
  auto streamed = stream_dump(path, options, tee ? static_cast<OrderedEventSink&>(*tee) : replay);
  if (prefetch) prefetch->finish();
  if (also_thread) also_thread->finish();
  if (!streamed) return streamed.error();
  replay.finish();
  return_free_pages();  // what the decoding threads and the live blocks held
  return streamed;
}

}  // namespace

Result<RelativeWindow> resolve_window(const RelativeWindow& window, const std::string& path, std::uint64_t start_ns) {
  if (!window.from_mark && !window.to_mark) return window;
  const auto markers = scan_markers(path);
  if (!markers) return markers.error();
  RelativeWindow w = window;
  if (w.from_mark) {
    const auto t = resolve_mark(*w.from_mark, *markers, start_ns, path);
    if (!t) return t.error();
    w.from_ns = *t;
  }
  if (w.to_mark) {
    const auto t = resolve_mark(*w.to_mark, *markers, start_ns, path);
    if (!t) return t.error();
    w.to_ns = *t;
  }
  if (w.to_ns && *w.to_ns < w.from_ns) {
    return Error{ErrorCode::kUsage,
                 fmt::format("{}: the range ends before it starts: its end ({}) is at +{:.6f}s, its start ({}) at "
                             "+{:.6f}s",
                             path, w.to_mark ? "mark:" + *w.to_mark : "--to", static_cast<double>(*w.to_ns) / 1e9,
                             w.from_mark ? "mark:" + *w.from_mark : "--from", static_cast<double>(w.from_ns) / 1e9)};
  }
  w.from_mark.reset();
  w.to_mark.reset();
  return w;
}

Result<HeapReport> build_heap_report(const std::string& path, const RelativeWindow& given, const LoadOptions& load,
                                     Symbolizer& symbolizer, HeapTimeline* timeline, TaggedEventSink* also,
                                     const std::vector<bool>* selected, MappingRecord* mappings) {
  if (also != nullptr && (given.to_ns || given.to_mark))
    return Error{ErrorCode::kUsage, "internal: a table needs a window with no end"};
  const auto start = dump_start_ns(path);
  if (!start) return start.error();
  const auto resolved = resolve_window(given, path, *start);
  if (!resolved) return resolved.error();
  const RelativeWindow& window = *resolved;
  TimeWindow abs;
  abs.from_ns = *start + window.from_ns;
  if (window.to_ns) abs.to_ns = *start + *window.to_ns;

  StackReplay replay(abs, selected);
  replay.set_mappings(mappings);
  auto streamed = replay_dump(path, load, replay, &symbolizer, timeline, also);
  if (!streamed) return streamed.error();
  if (timeline != nullptr) timeline->add_rss(streamed->dump.rss);
  HeapReport r = assemble_heap_report(std::move(*streamed), window, replay, symbolizer, mappings);
  // Stacks are symbolized into sites; the report needs no raw stacks now.
  r.dump.stacks.clear();
  return r;
}

HeapReport assemble_heap_report(StreamedDump streamed, const RelativeWindow& window, const StackReplay& replay,
                                Symbolizer& symbolizer, MappingRecord* mappings, const CallSites* sites) {
  const std::uint64_t start = streamed.dump.header.start_mono_ns;
  HeapReport r;
  r.dump = std::move(streamed.dump);
  r.stopped = std::move(streamed.stopped);
  r.window = window;
  r.totals = replay.totals();
  r.events = streamed.events;
  r.max_pending_events = streamed.max_pending;
  if (r.dump.last_time_ns && *r.dump.last_time_ns > start) r.duration_ns = *r.dump.last_time_ns - start;
  if (r.totals.peak_time_ns != 0) r.rss_at_peak_bytes = rss_at(r.dump, r.totals.peak_time_ns);
  r.sites = sites != nullptr ? *sites : build_call_sites(r.dump, replay.columns(), symbolizer);
  if (mappings != nullptr) r.mapping_sites = build_call_sites(r.dump, mappings->stack_columns(), symbolizer);
  for (const CallSite& s : r.sites.sites) {
    if (s.runtime) {
      r.runtime_retained_bytes += s.leaked_bytes;
      r.runtime_retained_count += s.leaked_count;
      r.peak_runtime_bytes += s.peak_bytes;
    } else {
      r.leaked_bytes += s.leaked_bytes;
      r.leaked_count += s.leaked_count;
    }
  }
  return r;
}

Result<ReplayedRun> replay_into(const std::string& path, const LoadOptions& load, TaggedEventSink& also) {
  const auto start = dump_start_ns(path);
  if (!start) return start.error();
  StackReplay replay(TimeWindow{*start});
  auto streamed = replay_dump(path, load, replay, nullptr, nullptr, &also);
  if (!streamed) return streamed.error();
  return ReplayedRun{streamed->events, replay.totals(), std::move(streamed->stopped)};
}

std::vector<std::size_t> top_sites(const HeapReport& report, SiteRanking ranking, std::size_t top) {
  const auto& sites = report.sites.sites;
  std::vector<std::pair<std::uint64_t, std::size_t>> ranked;  // (metric, site)
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (const std::uint64_t m = site_metric(sites[i], ranking); m != 0) ranked.emplace_back(m, i);
  }
  // Only sites whose metric reaches the top-th highest can be among the top:
  // find that metric first, so that labels (for ties) are made for those alone.
  if (ranked.size() > top && top > 0) {
    std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(top - 1), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    const std::uint64_t least = ranked[top - 1].first;
    std::erase_if(ranked, [least](const auto& r) { return r.first < least; });
  } else if (top == 0) {
    ranked.clear();
  }
  struct Entry {
    std::uint64_t metric;
    std::string label;
    std::size_t site;
  };
  std::vector<Entry> entries;
  entries.reserve(ranked.size());
  for (const auto& [m, i] : ranked) {
    entries.push_back(
        {m, sites[i].frames.empty() ? std::string() : frame_label(report.sites.frames[sites[i].frames[0]]), i});
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    if (a.metric != b.metric) return a.metric > b.metric;
    return std::tie(a.label, a.site) < std::tie(b.label, b.site);
  });
  std::vector<std::size_t> order;
  for (std::size_t k = 0; k < entries.size() && k < top; ++k) order.push_back(entries[k].site);
  return order;
}

}  // namespace memrec::analyzer
