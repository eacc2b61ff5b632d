// The answers memrec view's range and instant endpoints must give, computed
// from a dump's events in merged order (load/ordered_events.h) by a replay
// of this file's own, not from the allocation table the view answers from:
// tests/integration/test_view_oracle.py compares the two over HTTP, so the
// check holds whatever storage the table has.
//
//   view_event_oracle DUMP QUERIES.json > ANSWERS.json
//
// QUERIES: {"ranges": [[from_ns, to_ns(, kept_at_ns)], …], "instants": [at_ns, …]},
// ns since the dump's start, both ends of a range included (docs/api.md).
// ANSWERS: per range its totals (allocations, allocated_bytes, frees,
// unmatched_frees, temporary, leaked, peak and when) and each call site's
// figures, with kept_at what the range allocated still live then; per instant
// the heap, the live blocks and each site's live bytes and blocks. Site ids are
// the report's (the view's own numbering), taken from build_heap_report; every
// figure is this file's.
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/ordered_events.h"
#include "model/window_figures.h"
#include "reports/heap_report.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

using nlohmann::json;

constexpr std::uint32_t kNoSite = std::numeric_limits<std::uint32_t>::max();
constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

// The view's per-site figures (only the struct: every value here is this file's).
using Figures = SiteFigures;

struct Range {
  std::uint64_t from = 0;  // absolute
  std::uint64_t to = 0;
  Figures totals;
  std::uint64_t frees = 0;
  std::uint64_t unmatched_frees = 0;
  std::vector<Figures> sites;
  bool entered = false;  // an event at or after `from` was seen
  bool has_event = false;
  std::uint64_t peak = 0;
  std::uint64_t peak_time = kNone;
  std::vector<std::uint64_t> live_at_peak;  // per site
  // "Kept": the range's allocations still live at kept_at (absolute, at or
  // after `to`; kNone when not asked), per site (bytes, blocks) and in all.
  std::uint64_t kept_at = kNone;
  std::uint64_t kept_bytes = 0;
  std::uint64_t kept_count = 0;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> kept_sites;
};

struct Instant {
  std::uint64_t at = 0;  // absolute
  bool taken = false;
  std::uint64_t heap = 0;
  std::uint64_t blocks = 0;
  std::vector<std::uint64_t> bytes;
  std::vector<std::uint64_t> count;
};

struct Block {
  std::uint64_t time = 0;
  std::uint64_t size = 0;
  std::uint32_t site = kNoSite;
};

class Oracle final : public OrderedEventSink {
 public:
  Oracle(std::vector<Range> ranges, std::vector<Instant> instants,
         const std::unordered_map<std::uint32_t, std::uint32_t>& site_of_stack, std::size_t sites)
      : ranges_(std::move(ranges)), instants_(std::move(instants)), site_of_stack_(site_of_stack), sites_(sites) {
    live_bytes_.resize(sites);
    live_count_.resize(sites);
    for (Range& r : ranges_) {
      r.sites.resize(sites);
      r.kept_sites.resize(sites);
    }
  }

  void on_event(const HeapEvent& e, std::uint32_t thread) override {
    if (e.op != HeapOp::kAlloc && e.op != HeapOp::kFree) return;  // mappings are not heap
    take_instants(e.time_ns);
    for (Range& r : ranges_) {
      if (!r.entered && e.time_ns >= r.from) {
        r.entered = true;
        // The heap live as the range opens is a candidate for its peak.
        if (heap_ > 0 && e.time_ns <= r.to) set_peak(r, heap_, r.from);
      }
      if (e.time_ns >= r.from && e.time_ns <= r.to) r.has_event = true;
    }
    if (thread >= last_alloc_.size()) last_alloc_.resize(thread + 1, kNone);
    if (e.op == HeapOp::kAlloc) {
      alloc(e, thread);
    } else {
      free(e, thread);
    }
  }

  json finish() {
    take_instants(kNone);
    for (const auto& [addr, b] : live_) {
      for (Range& r : ranges_) {
        if (b.time < r.from || b.time > r.to) continue;
        leak(r, b);
        if (r.kept_at != kNone) keep(r, b);
      }
    }
    json out{{"ranges", json::array()}, {"instants", json::array()}};
    for (const Range& r : ranges_) out["ranges"].push_back(range_json(r));
    for (const Instant& i : instants_) {
      json sites = json::object();
      for (std::size_t s = 0; s < sites_; ++s) {
        if (i.bytes[s] != 0 || i.count[s] != 0) sites[std::to_string(s)] = {i.bytes[s], i.count[s]};
      }
      out["instants"].push_back(
          {{"at_ns", i.at - start_}, {"heap_bytes", i.heap}, {"live_count", i.blocks}, {"sites", std::move(sites)}});
    }
    return out;
  }

  void set_start(std::uint64_t start) { start_ = start; }

 private:
  std::uint32_t site_of(StackId stack) const {
    const auto it = site_of_stack_.find(stack.value);
    return it == site_of_stack_.end() ? kNoSite : it->second;
  }

  void take_instants(std::uint64_t time) {
    for (Instant& i : instants_) {
      if (i.taken || time <= i.at) continue;  // an instant holds every event at or before it
      i.taken = true;
      i.heap = heap_;
      i.blocks = live_.size();
      i.bytes = live_bytes_;
      i.count = live_count_;
    }
  }

  void set_peak(Range& r, std::uint64_t bytes, std::uint64_t time) {
    r.peak = bytes;
    r.peak_time = time;
    r.live_at_peak = live_bytes_;
  }

  void add_live(const Block& b) {
    heap_ += b.size;
    if (b.site != kNoSite) {
      live_bytes_[b.site] += b.size;
      ++live_count_[b.site];
    }
  }
  void drop_live(const Block& b) {
    heap_ -= b.size;
    if (b.site != kNoSite) {
      live_bytes_[b.site] -= b.size;
      --live_count_[b.site];
    }
  }

  static void leak(Range& r, const Block& b) {
    r.totals.leaked_bytes += b.size;
    ++r.totals.leaked_count;
    if (b.site == kNoSite) return;
    r.sites[b.site].leaked_bytes += b.size;
    ++r.sites[b.site].leaked_count;
  }

  static void keep(Range& r, const Block& b) {
    r.kept_bytes += b.size;
    ++r.kept_count;
    if (b.site == kNoSite) return;
    r.kept_sites[b.site].first += b.size;
    ++r.kept_sites[b.site].second;
  }

  // The block ends at `time`: ranges that allocated it and end before keep
  // it as leaked, and as kept if it outlived their kept_at.
  void ended(const Block& b, std::uint64_t time) {
    for (Range& r : ranges_) {
      if (b.time < r.from || b.time > r.to) continue;
      if (time > r.to) leak(r, b);
      if (r.kept_at != kNone && time > r.kept_at) keep(r, b);
    }
  }

  void alloc(const HeapEvent& e, std::uint32_t thread) {
    const Block b{e.time_ns, e.size, site_of(e.stack)};
    if (const auto old = live_.find(e.addr); old != live_.end()) {
      // An allocation over a live block: its free was not recorded.
      drop_live(old->second);
      ended(old->second, e.time_ns);
      live_.erase(old);
    }
    live_.emplace(e.addr, b);
    add_live(b);
    last_alloc_[thread] = e.addr;
    for (Range& r : ranges_) {
      if (e.time_ns < r.from || e.time_ns > r.to) continue;
      ++r.totals.allocations;
      r.totals.allocated_bytes += e.size;
      if (b.site != kNoSite) {
        ++r.sites[b.site].allocations;
        r.sites[b.site].allocated_bytes += e.size;
      }
      if (heap_ > r.peak) set_peak(r, heap_, e.time_ns);
    }
  }

  void free(const HeapEvent& e, std::uint32_t thread) {
    const auto found = live_.find(e.addr);
    if (found == live_.end()) {
      for (Range& r : ranges_) r.unmatched_frees += e.time_ns >= r.from && e.time_ns <= r.to ? 1 : 0;
      return;
    }
    const Block b = found->second;
    live_.erase(found);
    drop_live(b);
    const bool temporary = last_alloc_[thread] == e.addr;
    if (temporary) last_alloc_[thread] = kNone;
    ended(b, e.time_ns);
    for (Range& r : ranges_) {
      if (e.time_ns < r.from || e.time_ns > r.to) continue;
      ++r.frees;
      if (temporary && b.time >= r.from) {
        ++r.totals.temporary;
        if (b.site != kNoSite) ++r.sites[b.site].temporary;
      }
    }
  }

  json range_json(const Range& r) const {
    const bool peaked = r.has_event && r.peak_time != kNone;
    json sites = json::object();
    for (std::size_t s = 0; s < sites_; ++s) {
      Figures f = r.sites[s];
      f.peak_bytes = peaked ? r.live_at_peak[s] : 0;
      if (f.allocations == 0 && f.leaked_bytes == 0 && f.peak_bytes == 0) continue;
      sites[std::to_string(s)] = {{"allocations", f.allocations},   {"allocated_bytes", f.allocated_bytes},
                                  {"temporary", f.temporary},       {"leaked_bytes", f.leaked_bytes},
                                  {"leaked_count", f.leaked_count}, {"peak_bytes", f.peak_bytes}};
    }
    json out{{"from_ns", r.from - start_},
             {"to_ns", r.to - start_},
             {"allocations", r.totals.allocations},
             {"allocated_bytes", r.totals.allocated_bytes},
             {"frees", r.frees},
             {"unmatched_frees", r.unmatched_frees},
             {"temporary", r.totals.temporary},
             {"leaked_bytes", r.totals.leaked_bytes},
             {"leaked_count", r.totals.leaked_count},
             {"peak_bytes", peaked ? r.peak : 0},
             {"peak_time_ns", peaked ? json(r.peak_time - start_) : json(nullptr)},
             {"sites", std::move(sites)}};
    if (r.kept_at == kNone) return out;
    json kept_sites = json::object();
    for (std::size_t s = 0; s < sites_; ++s) {
      if (r.kept_sites[s].second != 0) kept_sites[std::to_string(s)] = {r.kept_sites[s].first, r.kept_sites[s].second};
    }
    out["kept"] = {{"at_ns", r.kept_at - start_},
                   {"bytes", r.kept_bytes},
                   {"count", r.kept_count},
                   {"sites", std::move(kept_sites)}};
    return out;
  }

  std::vector<Range> ranges_;
  std::vector<Instant> instants_;
  const std::unordered_map<std::uint32_t, std::uint32_t>& site_of_stack_;
  std::size_t sites_;
  std::uint64_t start_ = 0;
  std::unordered_map<std::uint64_t, Block> live_;
  std::vector<std::uint64_t> last_alloc_;  // per thread: its latest allocation, until freed
  std::uint64_t heap_ = 0;
  std::vector<std::uint64_t> live_bytes_;
  std::vector<std::uint64_t> live_count_;
};

int run(const std::string& path, const std::string& queries_path) {
  std::ifstream in(queries_path);
  if (!in) {
    std::cerr << "view_event_oracle: cannot read " << queries_path << "\n";
    return 2;
  }
  const json queries = json::parse(in);
  const auto start = dump_start_ns(path);
  if (!start) {
    std::cerr << "view_event_oracle: " << start.error().message << "\n";
    return 2;
  }
  Symbolizer symbolizer(SymbolizerOptions{});
  const auto report = build_heap_report(path, RelativeWindow{}, LoadOptions{}, symbolizer);
  if (!report) {
    std::cerr << "view_event_oracle: " << report.error().message << "\n";
    return 2;
  }
  std::vector<Range> ranges;
  for (const json& q : queries.at("ranges")) {
    Range r;
    r.from = *start + q.at(0).get<std::uint64_t>();
    r.to = *start + q.at(1).get<std::uint64_t>();
    if (q.size() > 2) r.kept_at = *start + q.at(2).get<std::uint64_t>();
    ranges.push_back(std::move(r));
  }
  std::vector<Instant> instants;
  for (const json& q : queries.at("instants")) {
    Instant i;
    i.at = *start + q.get<std::uint64_t>();
    instants.push_back(std::move(i));
  }
  Oracle oracle(std::move(ranges), std::move(instants), report->sites.site_of_stack, report->sites.sites.size());
  oracle.set_start(*start);
  const auto streamed = stream_dump(path, LoadOptions{}, oracle);
  if (!streamed) {
    std::cerr << "view_event_oracle: " << streamed.error().message << "\n";
    return 2;
  }
  std::cout << oracle.finish().dump() << "\n";
  return 0;
}

}  // namespace
}  // namespace memrec::analyzer

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: view_event_oracle DUMP QUERIES.json\n";
    return 1;
  }
  return memrec::analyzer::run(argv[1], argv[2]);
}
