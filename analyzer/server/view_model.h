// What `memrec view` holds per dump: the report (symbolized call sites, the
// whole-dump figures), the allocation table, and a small cache of range
// figures, since one page asks summary, timeline, sites and flame of the same
// range. Built by view_command.cpp; read concurrently by the handlers. The
// table of a large dump may come after the server started (TableSlot).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/allocation_pages.h"
#include "model/allocation_table.h"
#include "model/heap_cursor.h"
#include "model/heap_timeline.h"
#include "model/mapping_record.h"
#include "model/window_figures.h"
#include "reports/heap_report.h"

namespace memrec::analyzer::server {

// The report's figures over one range, per site too.
struct RangeFigures {
  TimeWindow window;  // absolute, both ends included
  HeapTotals totals;
  std::vector<SiteFigures> sites;  // by site id
  std::optional<std::uint64_t> rss_at_peak_bytes;
  std::uint64_t leaked_bytes = 0;  // program sites
  std::uint64_t leaked_count = 0;
  std::uint64_t runtime_retained_bytes = 0;
  std::uint64_t runtime_retained_count = 0;
  std::uint64_t peak_runtime_bytes = 0;
};

class RangeCache {
 public:
  std::shared_ptr<const RangeFigures> find(const TimeWindow& w) const;
  void put(std::shared_ptr<const RangeFigures> figures);

 private:
  static constexpr std::size_t kEntries = 8;
  mutable std::mutex mu_;
  std::vector<std::shared_ptr<const RangeFigures>> entries_;  // most recent last
};

// A dump's allocation table, which a large dump gets only after the server
// started: one thread builds it and publishes it once (or says why it will
// not come); the handlers read table() without a lock and answer 503 while
// it is null (view_api.cpp).
class TableSlot {
 public:
  const AllocationTable* table() const { return ready_.load(std::memory_order_acquire); }
  void publish(AllocationTable table);
  // A table that keeps growing after (a followed dump's, FollowedReport::
  // publish_table()): set before the dump is served, changed only while no
  // handler reads it (ViewData::follow_lock).
  void share(std::shared_ptr<const AllocationTable> table);
  // The table will not come; `why` is a sentence for the page.
  void fail(std::string why);
  const std::string* failure() const { return failed_.load(std::memory_order_acquire) ? &failure_ : nullptr; }
  // The building pass's progress: frames read, of all.
  void progress(std::size_t done, std::size_t total);
  unsigned percent() const;

 private:
  std::unique_ptr<AllocationTable> owned_;
  std::shared_ptr<const AllocationTable> shared_;
  std::atomic<const AllocationTable*> ready_{nullptr};
  std::string failure_;
  std::atomic<bool> failed_{false};
  std::atomic<std::uint64_t> done_{0};
  std::atomic<std::uint64_t> total_{0};
};

// `?group=label` (view_sites.h): each report site's group and each group's members.
struct SiteGrouping {
  std::vector<std::uint32_t> group_of_site;
  std::vector<std::vector<std::uint32_t>> members;
};

// A naming of the sites other than the report's own: built by view_sites.cpp
// on a request's first use, since most pages never ask for one and a copy of
// a large dump's sites is not free.
struct BuiltSites {
  CallSites sites;
  std::vector<std::string> labels;  // per site: its label text
  std::optional<SiteGrouping> grouping;
};
struct SiteVariants {
  std::array<std::once_flag, 3> once;  // raw, grouped, raw and grouped
  std::array<std::unique_ptr<const BuiltSites>, 3> built;
};

struct ViewDump {
  HeapReport report;
  std::unique_ptr<TableSlot> slot = std::make_unique<TableSlot>();
  std::vector<std::string> site_label;  // per site: its label text (site_label.h; ties in rankings)
  std::unique_ptr<SiteVariants> variants = std::make_unique<SiteVariants>();
  std::unique_ptr<RangeCache> cache = std::make_unique<RangeCache>();
  std::shared_ptr<const RangeFigures> whole_run = nullptr;  // set_whole_run(); never evicted
  // A dump served before its table: the whole run's heap over time, filled
  // by the report's pass in buckets of 2^k µs (the pass does not know the
  // run's end until it ends), served until the table's exact ones can be.
  std::optional<HeapTimeline> early_timeline;
  // The anonymous mappings (the Maps view), filled by the report's pass;
  // their stacks' sites are report.mapping_sites.
  std::optional<MappingRecord> mappings;
  // A followed dump still being written: every event before this (absolute)
  // is in its report and table, later ones are still to come. None once it
  // ended or was cut, and for a dump loaded whole.
  std::optional<std::uint64_t> followed_edge_ns;

  std::uint64_t start_ns() const { return report.dump.header.start_mono_ns; }
  // The dump's last time, absolute: the default end of a range.
  std::uint64_t end_ns() const { return start_ns() + report.duration_ns; }
  // Null until the table is built.
  const AllocationTable* table() const { return slot->table(); }
};

// Each site's label text (site_label.h).
std::vector<std::string> site_label_texts(const CallSites& sites);
// Fills the per-site labels once the report's sites are known.
void index_site_labels(ViewDump& dump);

// The whole run's figures, [start_ns(), end_ns()], which the page asks
// first: the report's own, ready before the table.
void set_whole_run(ViewDump& dump);

// The figures of [window.from_ns, window.to_ns] (absolute), cached: the
// whole run's, or else the table's; null when that takes the table and it
// is not built yet.
std::shared_ptr<const RangeFigures> range_figures(const ViewDump& dump, const TimeWindow& window);

// A site's report row with the range's figures in place of the whole dump's.
CallSite with_figures(const CallSite& site, const SiteFigures& figures);

}  // namespace memrec::analyzer::server
