// A report that follows a dump as it grows ends as the report of the finished
// file, JSON for JSON, whatever the steps it was read in.
#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/followed_report.h"
#include "reports/report_output.h"
#include "support/growing_dump.h"
#include "symbolize/symbolizer.h"

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

}  // namespace

TEST_SUITE("analyzer/followed_report") {
  TEST_CASE("a report followed in steps, cut at frames and inside them, equals the finished file's report") {
    for (const unsigned seed : {11u, 12u, 13u}) {
      CAPTURE(seed);
      const DumpBuilder b = interleaved_dump(seed, seed == 12 ? 1 : 4, /*end=*/true);
      const std::string path = temp_dump_path("followed-report");
      write_prefix(path, b.bytes(), b.bytes().size());
      Symbolizer symbolizer(SymbolizerOptions{});
      LoadOptions load;
      load.threads = 1;
      HeapTimeline whole_timeline(memrec::testing::kGrowingStartNs);
      const auto whole = build_heap_report(path, {}, load, symbolizer, &whole_timeline);
      REQUIRE(whole.ok());
      whole_timeline.extend_to(whole->dump.header.start_mono_ns + whole->duration_ns);
      REQUIRE(whole->totals.allocations > 100);
      const json expected = document(*whole);

      FollowOptions options;
      options.load.threads = 1;
      options.hold_back_ns = 5;
      FollowedReport followed(path, options);
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
      }
      CHECK(grew > 2);
      CHECK(followed.follower().finished());
      CHECK(document(followed.report(symbolizer)) == expected);
      // And the whole run's heap over time is the one the view shows of the finished file.
      CHECK(timeline_json(followed.timeline()) == timeline_json(whole_timeline));
      std::filesystem::remove(path);
    }
  }
}
