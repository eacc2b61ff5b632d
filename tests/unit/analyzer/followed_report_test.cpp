// A report that follows a dump as it grows ends as the report of the finished
// file, JSON for JSON, whatever the steps it was read in.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/window_figures.h"
#include "reports/followed_report.h"
#include "reports/report_output.h"
#include "reports/site_label.h"
#include "support/growing_dump.h"
#include "symbolize/symbolizer.h"
#include "table_compare.h"

using namespace memrec;
using namespace memrec::analyzer;
using memrec::testing::cut_points;
using memrec::testing::DumpBuilder;
using memrec::testing::interleaved_dump;
using memrec::testing::temp_dump_path;
using memrec::testing::write_prefix;
using nlohmann::json;

namespace {

// The report --json document of one report. How many events waited at
// most (max_pending_events) says how the events were read, not what they
// were: a followed dump holds them back over other steps.
json document(const HeapReport& report) {
  std::ostringstream out;
  REQUIRE(write_report_json(out, {report}, {ProcessNode{}}, 10, {}));
  json doc = json::parse(out.str());
  for (json& process : doc.at("processes")) REQUIRE(process.at("report").at("dump").erase("max_pending_events") == 1);
  return doc;
}

json timeline_json(const HeapTimeline& timeline) {
  json buckets = json::array();
  for (const TimelineBucket& b : timeline.buckets()) {
    buckets.push_back({b.heap_bytes, b.heap_max_bytes, b.live_count, b.alloc_count, b.free_count, b.temporary_count,
                       b.rss_bytes.value_or(0), b.has_events, b.changed});
  }
  return {{"bucket_ns", timeline.bucket_ns()}, {"buckets", buckets}};
}

// The figures of every window of `step_ns` steps ending before `edge_ns`
// (absolute; all of them without an edge), as JSON to compare.
json windows_json(const AllocationTable& t, std::uint64_t start_ns, std::uint64_t end_ns, std::uint64_t step_ns,
                  std::optional<std::uint64_t> edge_ns) {
  json out = json::array();
  for (std::uint64_t from = start_ns; from <= end_ns; from += step_ns) {
    for (std::uint64_t to = from; to <= end_ns + step_ns; to += step_ns) {
      if (edge_ns && to >= *edge_ns) break;
      const WindowFigures f = window_figures(t, TimeWindow{from, to});
      json sites = json::array();
      for (const SiteFigures& s : f.sites) {
        sites.push_back({s.allocations, s.allocated_bytes, s.temporary, s.leaked_bytes, s.leaked_count, s.peak_bytes});
      }
      const EventCursor at = cursor_at(t, to);
      out.push_back({from, to, f.totals.allocations, f.totals.frees, f.totals.peak_bytes, f.totals.peak_time_ns,
                     f.totals.leaked_bytes, f.totals.temporary, sites, at.heap_bytes, at.live_count});
    }
  }
  return out;
}

// A site by what the page shows of it: its frames' labels, innermost first.
std::vector<std::string> frame_labels(const CallSites& sites, const CallSite& site) {
  std::vector<std::string> out;
  for (const std::uint32_t f : site.frames) out.push_back(frame_label(sites.frames[f]));
  return out;
}

// Each site's figures by its frames; sites without a figure left out.
std::map<std::vector<std::string>, std::vector<std::uint64_t>> figures_by_frames(const CallSites& sites) {
  std::map<std::vector<std::string>, std::vector<std::uint64_t>> out;
  for (const CallSite& s : sites.sites) {
    if (s.allocations == 0 && s.peak_bytes == 0 && s.leaked_count == 0) continue;
    out[frame_labels(sites, s)] = {s.allocations,  s.allocated_bytes, s.temporary, s.leaked_bytes,
                                   s.leaked_count, s.peak_bytes,      s.stack_ids, s.truncated ? 1u : 0u};
  }
  return out;
}

// Frame f defines stacks 2f+1 and 2f+2 and allocates on both; 2f+2 has the
// frames of stack 1 from the second frame on (two ids, one site), so sites
// appear in every frame and stacks join old sites.
memrec::testing::DumpBuilder stacks_over_frames(std::size_t frames) {
  memrec::testing::DumpBuilder b(memrec::testing::sample_header());
  std::uint64_t now = memrec::testing::kGrowingStartNs;
  std::uint64_t addr = 0x10000;
  for (std::uint32_t f = 0; f < frames; ++f) {
    b.frame([&](format::RecordEncoder& e) {
      const std::uint64_t own[] = {0x400000 + 0x10 * f, 0x400100};
      const std::uint64_t first[] = {0x400000, 0x400100};
      const std::uint64_t other[] = {0x500000 + 0x10 * f, 0x400200};
      e.stack(2 * f + 1, 0, 0, own);
      e.stack(2 * f + 2, 0, 0, f == 0 ? std::span<const std::uint64_t>(other) : std::span<const std::uint64_t>(first));
      e.thread(7);
      for (std::uint32_t k = 0; k <= f; ++k) {
        e.alloc(format::AllocFn::kMalloc, ++now, addr += 0x40, 16 + k, 2 * f + 1);
        e.alloc(format::AllocFn::kMalloc, ++now, addr += 0x40, 100, 2 * f + 2);
        if (k % 2 == 1) e.free(++now, addr);
      }
      if (f + 1 == frames) e.end(now + 1);
    });
  }
  return b;
}

}  // namespace

TEST_SUITE("analyzer/followed_report") {
  TEST_CASE("a report followed in steps, cut at frames and inside them, equals the finished file's report") {
    std::size_t restarts = 0;
    for (const unsigned seed : {11u, 12u, 13u}) {
      CAPTURE(seed);
      const DumpBuilder b = interleaved_dump(seed, seed == 12 ? 1 : 4, /*end=*/true);
      const std::string path = temp_dump_path("followed-report");
      write_prefix(path, b.bytes(), b.bytes().size());
      Symbolizer symbolizer(SymbolizerOptions{});
      LoadOptions load;
      load.threads = 1;
      HeapTimeline whole_timeline(memrec::testing::kGrowingStartNs);
      AllocationTableBuilder whole_builder;
      const auto whole = build_heap_report(path, {}, load, symbolizer, &whole_timeline, &whole_builder);
      REQUIRE(whole.ok());
      whole_timeline.extend_to(whole->dump.header.start_mono_ns + whole->duration_ns);
      REQUIRE(whole->totals.allocations > 100);
      const json expected = document(*whole);

      FollowOptions options;
      options.load.threads = 1;
      options.hold_back_ns = 5;
      FollowedReport followed(path, options, /*with_table=*/true);
      std::uint64_t allocations_seen = 0;
      std::size_t grew = 0;
      for (const std::size_t cut : cut_points(b)) {
        write_prefix(path, b.bytes(), cut);
        const auto step = followed.step();
        REQUIRE(step.ok());
        REQUIRE(!step->error);
        const HeapReport now = followed.report(symbolizer);
        // Figures only grow while the file does.
        CHECK(now.totals.allocations >= allocations_seen);
        if (now.totals.allocations > allocations_seen) ++grew;
        allocations_seen = now.totals.allocations;
        if (const auto table = followed.publish_table()) {
          CHECK(table->rows() == now.totals.allocations);
        }
      }
      CHECK(grew > 2);
      CHECK(followed.follower().finished());
      CHECK(document(followed.report(symbolizer)) == expected);
      // And the whole run's heap over time is the one the view shows of the finished file.
      CHECK(timeline_json(followed.timeline()) == timeline_json(whole_timeline));
      // And its table, grown anew at each restart (a replay started over), is the finished file's.
      const auto table = followed.publish_table();
      REQUIRE(table != nullptr);
      AllocationTable whole_table = whole_builder.finish();
      const CallSites& sites = whole->sites;
      whole_table.set_sites(sites.site_of_stack, static_cast<std::uint32_t>(sites.sites.size()));
      table->set_sites(sites.site_of_stack, static_cast<std::uint32_t>(sites.sites.size()));
      check_same(*table, whole_table);
      restarts += followed.restarts();
      std::filesystem::remove(path);
    }
    CHECK(restarts > 0);  // the tables above were also made anew
  }

  TEST_CASE("a followed table answers every range before its edge as the finished file's table, and ends as it") {
    for (const unsigned seed : {21u, 22u}) {
      CAPTURE(seed);
      const DumpBuilder b = interleaved_dump(seed, seed == 22 ? 1 : 4, /*end=*/true);
      const std::string path = temp_dump_path("followed-table");
      write_prefix(path, b.bytes(), b.bytes().size());
      Symbolizer symbolizer(SymbolizerOptions{});
      LoadOptions load;
      load.threads = 1;
      AllocationTableBuilder whole_builder;
      const auto whole = build_heap_report(path, {}, load, symbolizer, nullptr, &whole_builder);
      REQUIRE(whole.ok());
      AllocationTable whole_table = whole_builder.finish();
      whole_table.set_sites(whole->sites.site_of_stack, static_cast<std::uint32_t>(whole->sites.sites.size()));
      const std::uint64_t start = whole->dump.header.start_mono_ns;
      const std::uint64_t end = start + whole->duration_ns;
      const std::uint64_t step_ns = std::max<std::uint64_t>(1, whole->duration_ns / 12);
      const json expected = windows_json(whole_table, start, end, step_ns, std::nullopt);

      // Held back long enough that no later frame holds an event older than
      // the edge (no restart, checked below): only then is a range before
      // the edge final.
      FollowOptions options;
      options.load.threads = 1;
      options.hold_back_ns = 150;
      FollowedReport followed(path, options, /*with_table=*/true);
      std::size_t compared = 0;
      std::shared_ptr<AllocationTable> table;
      for (const std::size_t cut : cut_points(b)) {
        write_prefix(path, b.bytes(), cut);
        const auto step = followed.step();
        REQUIRE(step.ok());
        table = followed.publish_table();
        if (table == nullptr) continue;  // no header yet
        const HeapReport now = followed.report(symbolizer);
        table->set_sites(now.sites.site_of_stack, static_cast<std::uint32_t>(now.sites.sites.size()));
        // Sites are numbered per report: compared by their site's stack's, the first one's.
        const std::uint64_t edge = followed.follower().released_before();
        const json got = windows_json(*table, start, end, step_ns, edge);
        json want = json::array();
        for (const json& w : expected) {
          if (w[1].get<std::uint64_t>() < edge) want.push_back(w);
        }
        REQUIRE(got.size() == want.size());
        if (now.sites.sites.size() == whole->sites.sites.size() &&
            now.sites.site_of_stack == whole->sites.site_of_stack) {
          CHECK(got == want);
        } else {
          for (std::size_t i = 0; i < got.size(); ++i) {
            json g = got[i], w = want[i];
            g.erase(8);
            w.erase(8);
            CHECK(g == w);
          }
        }
        compared += got.size();
      }
      REQUIRE(followed.follower().finished());
      REQUIRE(followed.restarts() == 0);
      CHECK(compared > expected.size());
      REQUIRE(table != nullptr);
      // A followed dump numbers its sites as they appear (the page's open row
      // keeps its id); the file's report numbers them by stack. The same rows
      // under the file's numbering must be the file's table.
      table->set_sites(whole->sites.site_of_stack, static_cast<std::uint32_t>(whole->sites.sites.size()));
      check_same(*table, whole_table);
      CHECK(windows_json(*table, start, end, step_ns, std::nullopt) == expected);
      std::filesystem::remove(path);
    }
  }

  TEST_CASE("followed call sites keep their ids across steps, place each stack once and end as the finished file's") {
    const memrec::testing::DumpBuilder b = stacks_over_frames(6);
    const std::string path = temp_dump_path("followed-sites");
    write_prefix(path, b.bytes(), b.bytes().size());
    Symbolizer symbolizer(SymbolizerOptions{});
    LoadOptions load;
    load.threads = 1;
    const auto whole = build_heap_report(path, {}, load, symbolizer);
    REQUIRE(whole.ok());
    // 12 stacks, 7 sites: stack 2 has frames of its own, stacks 4, 6, ... 12 those of stack 1.
    REQUIRE(whole->sites.sites.size() == 7);

    FollowOptions options;
    options.load.threads = 1;
    options.hold_back_ns = 1;
    FollowedReport followed(path, options);
    std::vector<std::vector<std::string>> before;  // each site's frames at the step before
    std::size_t steps_with_new_sites = 0;
    for (const std::size_t cut : cut_points(b)) {
      write_prefix(path, b.bytes(), cut);
      const auto step = followed.step();
      REQUIRE(step.ok());
      const HeapReport now = followed.report(symbolizer);
      REQUIRE(now.sites.sites.size() >= before.size());
      for (std::size_t i = 0; i < before.size(); ++i) {
        CAPTURE(i);
        CHECK(frame_labels(now.sites, now.sites.sites[i]) == before[i]);
      }
      if (now.sites.sites.size() > before.size()) ++steps_with_new_sites;
      before.clear();
      for (const CallSite& site : now.sites.sites) before.push_back(frame_labels(now.sites, site));
      REQUIRE(followed.sites().labels().size() == now.sites.sites.size());
      for (std::size_t i = 0; i < now.sites.sites.size(); ++i) {
        CHECK(followed.sites().labels()[i] == site_label(now.sites, now.sites.sites[i]).text);
      }
    }
    CHECK(steps_with_new_sites >= 5);
    REQUIRE(followed.follower().finished());
    const HeapReport last = followed.report(symbolizer);
    CHECK(figures_by_frames(last.sites) == figures_by_frames(whole->sites));
    CHECK(last.sites.site_of_stack.size() == 12);
    CHECK(followed.sites().placed_stacks() == 12);
    std::filesystem::remove(path);
  }
}
