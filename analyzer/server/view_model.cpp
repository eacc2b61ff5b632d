// Range figures are computed from the allocation table with the report's
// window rules, so they equal `memrec report --from --to` (the tests compare).
#include "server/view_model.h"

#include <algorithm>

#include "reports/site_label.h"
#include "reports/site_match.h"

namespace memrec::analyzer::server {

std::shared_ptr<const RangeFigures> RangeCache::find(const TimeWindow& w) const {
  const std::lock_guard lock(mu_);
  for (const auto& e : entries_) {
    if (e->window.from_ns == w.from_ns && e->window.to_ns == w.to_ns) return e;
  }
  return nullptr;
}

void RangeCache::put(std::shared_ptr<const RangeFigures> figures) {
  const std::lock_guard lock(mu_);
  if (entries_.size() == kEntries) entries_.erase(entries_.begin());
  entries_.push_back(std::move(figures));
}

void TableSlot::publish(AllocationTable table) {
  owned_ = std::make_unique<AllocationTable>(std::move(table));
  ready_.store(owned_.get(), std::memory_order_release);
}

void TableSlot::share(std::shared_ptr<const AllocationTable> table) {
  shared_ = std::move(table);
  ready_.store(shared_.get(), std::memory_order_release);
}

void TableSlot::fail(std::string why) {
  failure_ = std::move(why);
  failed_.store(true, std::memory_order_release);
}

void TableSlot::progress(std::size_t done, std::size_t total) {
  done_.store(done, std::memory_order_relaxed);
  total_.store(total, std::memory_order_relaxed);
}

unsigned TableSlot::percent() const {
  if (table() != nullptr) return 100;
  const std::uint64_t total = total_.load(std::memory_order_relaxed);
  const std::uint64_t done = std::min(done_.load(std::memory_order_relaxed), total);
  // Not 100 before it is published: the table's finish comes after the pass.
  return total == 0 ? 0 : static_cast<unsigned>(std::min<std::uint64_t>(99, done * 100 / total));
}

std::vector<std::string> site_label_texts(const CallSites& sites) {
  std::vector<std::string> out;
  out.reserve(sites.sites.size());
  for (const CallSite& site : sites.sites) out.push_back(site_label(sites, site).text);
  return out;
}

void index_site_labels(ViewDump& dump) { dump.site_label = site_label_texts(dump.report.sites); }

CallSite with_figures(const CallSite& site, const SiteFigures& f) {
  CallSite out = site;
  out.allocations = f.allocations;
  out.allocated_bytes = f.allocated_bytes;
  out.temporary = f.temporary;
  out.leaked_bytes = f.leaked_bytes;
  out.leaked_count = f.leaked_count;
  out.peak_bytes = f.peak_bytes;
  return out;
}

// The replay that built the report saw every event from the start on, and
// the table's figures for any range equal a replay's over it (the tests
// compare both with `memrec report`): the whole run needs no scan of the
// table's rows, which took 4 s of a 500 M-allocation dump's load, and no
// table at all, so a large dump is served before its table is built.
void set_whole_run(ViewDump& dump) {
  const HeapReport& r = dump.report;
  auto out = std::make_shared<RangeFigures>();
  out->window = TimeWindow{dump.start_ns(), std::max(dump.end_ns(), dump.start_ns())};
  out->totals = r.totals;
  out->sites.reserve(r.sites.sites.size());
  for (const CallSite& s : r.sites.sites) {
    out->sites.push_back(
        SiteFigures{s.allocations, s.allocated_bytes, s.temporary, s.leaked_bytes, s.leaked_count, s.peak_bytes});
  }
  out->rss_at_peak_bytes = r.rss_at_peak_bytes;
  out->leaked_bytes = r.leaked_bytes;
  out->leaked_count = r.leaked_count;
  out->runtime_retained_bytes = r.runtime_retained_bytes;
  out->runtime_retained_count = r.runtime_retained_count;
  out->peak_runtime_bytes = r.peak_runtime_bytes;
  dump.whole_run = std::move(out);
}

std::shared_ptr<const RangeFigures> range_figures(const ViewDump& dump, const TimeWindow& window) {
  if (dump.whole_run && dump.whole_run->window.from_ns == window.from_ns &&
      dump.whole_run->window.to_ns == window.to_ns)
    return dump.whole_run;
  if (auto hit = dump.cache->find(window)) return hit;
  const AllocationTable* table = dump.table();
  if (table == nullptr) return nullptr;
  auto out = std::make_shared<RangeFigures>();
  WindowFigures w = window_figures(*table, window);
  out->window = window;
  out->totals = w.totals;
  out->sites = std::move(w.sites);
  if (out->totals.peak_time_ns != 0) out->rss_at_peak_bytes = rss_at(dump.report.dump, out->totals.peak_time_ns);
  const auto& sites = dump.report.sites.sites;
  for (std::size_t i = 0; i < sites.size() && i < out->sites.size(); ++i) {
    const SiteFigures& f = out->sites[i];
    if (sites[i].runtime) {
      out->runtime_retained_bytes += f.leaked_bytes;
      out->runtime_retained_count += f.leaked_count;
      out->peak_runtime_bytes += f.peak_bytes;
    } else {
      out->leaked_bytes += f.leaked_bytes;
      out->leaked_count += f.leaked_count;
    }
  }
  dump.cache->put(out);
  return out;
}

}  // namespace memrec::analyzer::server
