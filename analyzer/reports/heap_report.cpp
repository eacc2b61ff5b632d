// Builds one HeapReport: stream, replay, symbolize, split the runtime's
// retained blocks from the program's leaks.
#include "reports/heap_report.h"

#include <algorithm>
#include <tuple>

#include "load/ordered_events.h"

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

// Hands each event to the replay, then the heap it leaves to the timeline,
// then the event to `also`.
class TimelineTee final : public OrderedEventSink {
 public:
  TimelineTee(StackReplay& replay, HeapTimeline* timeline, OrderedEventSink* also)
      : replay_(replay), timeline_(timeline), also_(also) {}
  void on_event(const HeapEvent& event, std::uint32_t thread) override {
    replay_.on_event(event, thread);
    if (timeline_ != nullptr && (event.op == HeapOp::kAlloc || event.op == HeapOp::kFree)) {
      timeline_->add(event.time_ns, replay_.live_bytes(), replay_.live_count());
    }
    if (also_ != nullptr) also_->on_event(event, thread);
  }

 private:
  StackReplay& replay_;
  HeapTimeline* timeline_;
  OrderedEventSink* also_;
};

}  // namespace

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

Result<HeapReport> build_heap_report(const std::string& path, const RelativeWindow& window, const LoadOptions& load,
                                     Symbolizer& symbolizer, HeapTimeline* timeline, OrderedEventSink* also) {
  // The window needs the start time: read just the header (indexing the
  // frames would fault in a page around every frame's envelope).
  std::uint64_t start = 0;
  {
    auto file = reader::MappedFile::open(path);
    if (!file) return file.error();
    auto header = reader::parse_file_header(file->bytes(), path);
    if (!header) return header.error();
    start = header->start_mono_ns;
  }
  TimeWindow abs;
  abs.from_ns = start + window.from_ns;
  if (window.to_ns) abs.to_ns = start + *window.to_ns;

  StackReplay replay(abs);
  std::optional<TimelineTee> tee;
  if (timeline != nullptr || also != nullptr) tee.emplace(replay, timeline, also);
  auto streamed = stream_dump(path, load, tee ? static_cast<OrderedEventSink&>(*tee) : replay);
  if (!streamed) return streamed.error();
  replay.finish();
  if (timeline != nullptr) timeline->add_rss(streamed->dump.rss);

  HeapReport r;
  r.dump = std::move(streamed->dump);
  r.stopped = std::move(streamed->stopped);
  r.window = window;
  r.totals = replay.totals();
  r.events = streamed->events;
  r.max_pending_events = streamed->max_pending;
  if (r.dump.last_time_ns && *r.dump.last_time_ns > start) r.duration_ns = *r.dump.last_time_ns - start;
  if (r.totals.peak_time_ns != 0) r.rss_at_peak_bytes = rss_at(r.dump, r.totals.peak_time_ns);
  r.sites = build_call_sites(r.dump, replay.columns(), symbolizer);
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
  // Stacks are symbolized into sites; the report needs no raw stacks now.
  r.dump.stacks.clear();
  return r;
}

std::vector<std::size_t> top_sites(const HeapReport& report, SiteRanking ranking, std::size_t top) {
  const auto& sites = report.sites.sites;
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (site_metric(sites[i], ranking) != 0) order.push_back(i);
  }
  const auto label = [&](std::size_t i) {
    return sites[i].frames.empty() ? std::string() : frame_label(report.sites.frames[sites[i].frames[0]]);
  };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const std::uint64_t ma = site_metric(sites[a], ranking);
    const std::uint64_t mb = site_metric(sites[b], ranking);
    if (ma != mb) return ma > mb;
    const std::string la = label(a);
    const std::string lb = label(b);
    return std::tie(la, a) < std::tie(lb, b);
  });
  if (order.size() > top) order.resize(top);
  return order;
}

}  // namespace memrec::analyzer
