// memrec view's API around a dump served before its allocation table is
// built (server/view_loads.cpp), or before it is loaded at all: what answers at once, what is a 503 that
// carries the build's percent, what a table that never comes says, and that
// the table of the second pass (replay_into) answers exactly as the one built
// beside the report. Also how sites are named: by label, raw=1, group=label.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <fstream>
#include <map>
#include <string>

#include "model/allocation_table.h"
#include "model/heap_timeline.h"
#include "reports/heap_report.h"
#include "reports/site_label.h"
#include "server/view_api.h"
#include "server/view_loads.h"
#include "server/view_model.h"
#include "support/dump_builder.h"
#include "symbolize/symbolizer.h"

using namespace memrec;
using namespace memrec::analyzer;
using format::AllocFn;
using nlohmann::json;

namespace {

constexpr std::uint64_t kT0 = 1'000'000;  // sample_header's start_mono_ns

// Two threads and three stacks over 40 µs: blocks freed on the other thread,
// a realloc chain, an address reused, and two leaks.
std::string churn_dump() {
  testing::DumpBuilder b;
  const std::uint64_t s1[] = {0x401000, 0x402000};
  const std::uint64_t s2[] = {0x403000, 0x402000};
  const std::uint64_t s3[] = {0x404000};
  b.frame([&](format::RecordEncoder& e) {
    e.stack(1, 0, 0, s1);
    e.stack(2, 0, 0, s2);
    e.stack(3, 0, 0, s3);
    e.thread(10);
    for (std::uint64_t i = 0; i < 20; ++i) e.alloc(AllocFn::kMalloc, kT0 + 1000 * i, 0x10000 + 0x100 * i, 16 + i, 1);
    e.alloc(AllocFn::kMalloc, kT0 + 20'500, 0x90000, 40, 3);
    e.realloc(AllocFn::kRealloc, kT0 + 21'000, 0x90000, kT0 + 21'001, 0x91000, 400, 3);
    e.thread(11);
    for (std::uint64_t i = 0; i < 18; ++i) e.free(kT0 + 22'000 + 500 * i, 0x10000 + 0x100 * i);
    e.alloc(AllocFn::kCalloc, kT0 + 32'000, 0x10000, 64, 2);  // reuses the first block's address
    e.free(kT0 + 33'000, 0x10000);
    e.alloc(AllocFn::kMalloc, kT0 + 34'000, 0x20000, 99, 2);
    e.thread(10);
    e.free(kT0 + 35'000, 0x91000);
    e.end(kT0 + 40'000);
  });
  return testing::write_temp_file(b.bytes(), "view_api.dat");
}

// Over 3 ms, so that the report's pass widens its timeline's buckets: two
// threads, blocks freed on the other one, 500 of them twice and one address
// never allocated (501 frees of no live block), an allocation over a live
// block, RSS samples, and leaks.
std::string long_dump() {
  testing::DumpBuilder b;
  const std::uint64_t s1[] = {0x401000, 0x402000};
  const std::uint64_t s2[] = {0x403000};
  b.frame([&](format::RecordEncoder& e) {
    e.stack(1, 0, 0, s1);
    e.stack(2, 0, 0, s2);
    e.thread(10);
    for (std::uint64_t i = 0; i < 1500; ++i) {
      e.alloc(AllocFn::kMalloc, kT0 + 1000 * i + 7, 0x100000 + 0x100 * i, 16 + i % 200, 1 + i % 2);
      if (i % 3 == 0) e.free(kT0 + 1000 * i + 500, 0x100000 + 0x100 * (i / 2));
    }
    e.rss(kT0 + 700'000, 5 << 20);
    e.rss(kT0 + 700'100, 6 << 20);
    e.free(kT0 + 1'500'000, 0xdead000);                                            // no recorded block
    e.alloc(AllocFn::kMalloc, kT0 + 1'500'001, 0x100000 + 0x100 * 1499, 4096, 2);  // over a live one
    e.thread(11);
    for (std::uint64_t i = 0; i < 1500; ++i) e.free(kT0 + 1'600'000 + 900 * i, 0x100000 + 0x100 * i);
    e.end(kT0 + 3'100'000);
  });
  return testing::write_temp_file(b.bytes(), "view_api_long.dat");
}

// Temporary allocations across several checkpoints of the table: thread 10
// frees every third block before its next allocation (500 temporary, with
// non-temporary frees between), thread 11 holds each of its 30 blocks for
// 40 µs before freeing it, allocating nothing else (30 temporary, spanning
// the edges of most ranges).
std::string temporaries_dump() {
  testing::DumpBuilder b;
  const std::uint64_t s1[] = {0x401000};
  const std::uint64_t s2[] = {0x402000};
  b.frame([&](format::RecordEncoder& e) {
    e.stack(1, 0, 0, s1);
    e.stack(2, 0, 0, s2);
    e.thread(10);
    for (std::uint64_t i = 0; i < 1500; ++i) {
      e.alloc(AllocFn::kMalloc, kT0 + 1000 * i + 7, 0x100000 + 0x100 * i, 32, 1);
      if (i % 3 == 0) e.free(kT0 + 1000 * i + 500, 0x100000 + 0x100 * i);
      if (i % 3 == 2) e.free(kT0 + 1000 * i + 500, 0x100000 + 0x100 * (i - 1));
    }
    e.thread(11);
    for (std::uint64_t j = 0; j < 30; ++j) {
      e.alloc(AllocFn::kMalloc, kT0 + 50'000 * j + 100, 0x900000 + 0x100 * j, 64, 2);
      e.free(kT0 + 50'000 * j + 40'100, 0x900000 + 0x100 * j);
    }
    e.end(kT0 + 1'600'000);
  });
  return testing::write_temp_file(b.bytes(), "view_api_temporaries.dat");
}

server::ParamFn params(std::map<std::string, std::string> values) {
  return [values = std::move(values)](const std::string& name) -> std::optional<std::string> {
    const auto it = values.find(name);
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

// A dump as view_command.cpp loads it: with its table when `table` is given.
server::ViewDump load(const std::string& path, Symbolizer& symbolizer, AllocationTableBuilder* table) {
  auto report = build_heap_report(path, RelativeWindow{}, LoadOptions{2}, symbolizer, nullptr, table);
  REQUIRE(report.ok());
  server::ViewDump dump;
  dump.report = std::move(*report);
  server::index_site_labels(dump);
  server::set_whole_run(dump);
  return dump;
}

// A dump as view_command.cpp loads one it serves before its table: with the
// whole run's timeline from the report's pass.
server::ViewDump load_early(const std::string& path, Symbolizer& symbolizer) {
  const auto start = dump_start_ns(path);
  REQUIRE(start.ok());
  HeapTimeline timeline(*start);
  auto report = build_heap_report(path, RelativeWindow{}, LoadOptions{2}, symbolizer, &timeline, nullptr);
  REQUIRE(report.ok());
  server::ViewDump dump;
  dump.report = std::move(*report);
  timeline.extend_to(dump.end_ns());
  dump.early_timeline = std::move(timeline);
  server::index_site_labels(dump);
  server::set_whole_run(dump);
  return dump;
}

void publish(server::ViewDump& dump, AllocationTableBuilder& builder) {
  AllocationTable table = builder.finish();
  table.set_sites(dump.report.sites.site_of_stack, static_cast<std::uint32_t>(dump.report.sites.sites.size()));
  dump.slot->publish(std::move(table));
}

json body_of(const server::ApiAnswer& a) {
  REQUIRE_MESSAGE(!a.error, a.error->message);
  return a.body;
}

void check_building(const server::ApiAnswer& a, unsigned percent) {
  REQUIRE(a.error);
  CHECK(a.error->status == 503);
  CHECK(a.error->building_percent == percent);
  CHECK(a.error->message.find("still being built (" + std::to_string(percent) + " %)") != std::string::npos);
}

// A C++ service's sites as the report builds them, without a table: two
// stacks through operator new (libstdc++) into Cache::store at one line, from
// two callers, and one site of the program's own.
server::ViewDump service_dump() {
  server::ViewDump d;
  CallSites& cs = d.report.sites;
  const std::string exe = "/srv/bin/service";
  cs.frames = {
      {"operator new(unsigned long)", "", 0, "/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 0x9a0, false},
      {"Cache::store(std::vector<int, std::allocator<int> > const&)", "/srv/cache.cpp", 12, exe, 0x1200, false},
      {"serve_get()", "/srv/main.cpp", 30, exe, 0x1400, false},
      {"serve_put()", "/srv/main.cpp", 40, exe, 0x1500, false},
      {"record_log()", "/srv/log.cpp", 8, exe, 0x1600, false},
  };
  const auto site = [](SiteFrames frames, std::uint64_t leaked, std::uint64_t count) {
    CallSite s;
    s.frames = std::move(frames);
    s.allocations = count;
    s.allocated_bytes = leaked;
    s.leaked_bytes = leaked;
    s.leaked_count = count;
    s.peak_bytes = leaked;
    return s;
  };
  cs.sites = {site({0, 1, 2}, 300, 3), site({0, 1, 3}, 200, 2), site({4, 2}, 400, 1)};
  label_sites(cs);
  server::index_site_labels(d);
  server::set_whole_run(d);
  return d;
}

std::vector<std::string> names_in(const json& node) {
  std::vector<std::string> out{node["name"].get<std::string>()};
  for (const json& child : node["children"]) {
    for (std::string& n : names_in(child)) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace

TEST_SUITE("server/view_api") {
  TEST_CASE("sites are named by their program frame, with the library frames folded under it") {
    server::ViewData data;
    data.dumps.push_back(service_dump());
    const json sites = body_of(server::api_sites(data, "0", params({})));
    REQUIRE(sites["total"] == 3);
    const json& store = sites["sites"][1];  // 300 leaked, after record_log's 400
    CHECK(sites["sites"][0]["label"] == "record_log");
    CHECK(sites["sites"][0]["via"] == nullptr);
    CHECK(store["label"] == "Cache::store");
    CHECK(store["label_full"] == "Cache::store(std::vector<int, std::allocator<int> > const&)");
    CHECK(store["via"] == "operator new");
    CHECK(store["label_frame"] == 1);
    CHECK(store["top"]["file"] == "/srv/cache.cpp");
    CHECK(store["top"]["line"] == 12);

    const json detail = body_of(server::api_site(data, "0", std::to_string(store["id"].get<int>()), params({})));
    REQUIRE(detail["frames"].size() == 3);
    CHECK(detail["frames"][0]["folded"] == true);
    CHECK(detail["frames"][1]["folded"] == false);
    CHECK_FALSE(detail.contains("paths"));

    const json flame = body_of(server::api_flame(data, "0", params({})));
    const auto names = names_in(flame["root"]);
    CHECK(std::find(names.begin(), names.end(), "operator new(unsigned long)") == names.end());
  }

  TEST_CASE("raw=1 names sites by their innermost frame and keeps library leaves in the flamegraph") {
    server::ViewData data;
    data.dumps.push_back(service_dump());
    const json sites = body_of(server::api_sites(data, "0", params({{"raw", "1"}})));
    CHECK(sites["sites"][1]["label"] == "operator new");
    CHECK(sites["sites"][1]["label_frame"] == 0);
    CHECK(sites["sites"][1]["via"] == nullptr);
    const json detail = body_of(server::api_site(data, "0", "0", params({{"raw", "1"}})));
    for (const json& f : detail["frames"]) CHECK(f["folded"] == false);
    const json flame = body_of(server::api_flame(data, "0", params({{"raw", "1"}})));
    const auto names = names_in(flame["root"]);
    CHECK(std::find(names.begin(), names.end(), "operator new(unsigned long)") != names.end());
    // The default naming is untouched by the raw one built beside it.
    CHECK(body_of(server::api_sites(data, "0", params({})))["sites"][1]["label"] == "Cache::store");
  }

  TEST_CASE("group=label merges the sites of one label line, sums their figures and lists their paths") {
    server::ViewData data;
    data.dumps.push_back(service_dump());
    const json sites = body_of(server::api_sites(data, "0", params({{"group", "label"}})));
    REQUIRE(sites["total"] == 2);
    const json& store = sites["sites"][0];
    CHECK(store["label"] == "Cache::store");
    CHECK(store["leaked_bytes"] == 500);
    CHECK(store["leaked_count"] == 5);
    CHECK(store["peak_bytes"] == 500);
    CHECK(store["path_count"] == 2);
    const std::string id = std::to_string(store["id"].get<int>());
    const json detail = body_of(server::api_site(data, "0", id, params({{"group", "label"}})));
    CHECK(detail["allocated_bytes"] == 500);
    REQUIRE(detail["paths"].size() == 2);
    for (const json& path : detail["paths"]) {
      CHECK(path[0]["folded"] == true);
      CHECK(path[1]["function"] == store["label_full"]);
    }
    // Raw and grouped, the two stacks through operator new are one site: it is the innermost frame of both.
    const json raw = body_of(server::api_sites(data, "0", params({{"group", "label"}, {"raw", "1"}})));
    CHECK(raw["total"] == 2);
    CHECK(raw["sites"][0]["label"] == "operator new");
    CHECK(raw["sites"][0]["leaked_bytes"] == 500);
  }

  TEST_CASE("a naming parameter with another value is a 400") {
    server::ViewData data;
    data.dumps.push_back(service_dump());
    for (const auto& [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"raw", "yes"}, {"raw", "2"}, {"group", "line"}, {"group", ""}}) {
      CAPTURE(name);
      CAPTURE(value);
      const auto answer = server::api_sites(data, "0", params({{name, value}}));
      REQUIRE(answer.error);
      CHECK(answer.error->status == 400);
      CHECK(server::api_flame(data, "0", params({{name, value}})).error->status == 400);
      CHECK(server::api_site(data, "0", "0", params({{name, value}})).error->status == 400);
    }
  }

  TEST_CASE("before its table, a dump answers for its whole run and says 503 with the percent for the rest") {
    const std::string path = churn_dump();
    Symbolizer symbolizer(SymbolizerOptions{{}, 1});
    server::ViewData data;
    data.dumps.push_back(load(path, symbolizer, nullptr));
    server::ViewDump& d = data.dumps[0];
    d.slot->progress(3, 10);
    const auto none = params({});

    const json summary = body_of(server::api_summary(data, "0", none));
    CHECK(summary["allocations"] == 24);
    CHECK(summary["leaked"]["bytes"] == 34 + 35 + 99);
    const json sites = body_of(server::api_sites(data, "0", params({{"sort", "allocated"}, {"spark", "16"}})));
    CHECK(sites["total"] == 3);
    CHECK(sites["table"] == json{{"state", "building"}, {"percent", 30}});
    for (const json& row : sites["sites"]) CHECK_FALSE(row.contains("spark"));
    const json flame = body_of(server::api_flame(data, "0", params({{"metric", "allocated"}})));
    CHECK(flame["total"] == summary["allocated_bytes"]);
    CHECK(body_of(server::api_site(data, "0", "0", none))["frames"].size() == 2);
    CHECK(body_of(server::api_dumps(data))["dumps"][0]["table"] == json{{"state", "building"}, {"percent", 30}});

    const std::string mid = std::to_string(20'000);
    check_building(server::api_summary(data, "0", params({{"from", "0"}, {"to", mid}})), 30);
    check_building(server::api_timeline(data, "0", none), 30);
    check_building(server::api_sites(data, "0", params({{"at", mid}})), 30);
    check_building(server::api_flame(data, "0", params({{"metric", "live"}, {"at", mid}})), 30);
    check_building(server::api_site(data, "0", "0", params({{"at", mid}})), 30);
    check_building(server::api_instant(data, "0", params({{"at", mid}})), 30);
    check_building(server::api_allocations(data, "0", none), 30);
    check_building(server::api_allocation(data, "0", "0", none), 30);
    // Bad parameters are still refused as such.
    CHECK(server::api_sites(data, "0", params({{"sort", "nope"}})).error->status == 400);
  }

  TEST_CASE("before its table, the whole run's timeline is the report's pass's, bucket for bucket the table's") {
    // given a dump served before its table, and the same dump with its table
    for (const bool spread : {false, true}) {
      CAPTURE(spread);
      const std::string path = spread ? long_dump() : churn_dump();
      const std::uint64_t end = spread ? 3'100'000 : 40'000;
      Symbolizer symbolizer(SymbolizerOptions{{}, 1});
      server::ViewData data;
      data.dumps.push_back(load_early(path, symbolizer));
      data.dumps[0].slot->progress(1, 4);
      AllocationTableBuilder beside;
      data.dumps.push_back(load(path, symbolizer, &beside));
      publish(data.dumps[1], beside);

      // when the page asks for the whole run's timeline while the table is built
      const json early = body_of(server::api_timeline(data, "0", params({})));

      // then it comes at once, says the table is still built, and its buckets are 2^k µs wide
      CHECK(early["table"] == json{{"state", "building"}, {"percent", 25}});
      const std::uint64_t width = early["bucket_ns"];
      CHECK(width >= 1000);
      CHECK(std::has_single_bit(width / 1000));
      CHECK(width % 1000 == 0);
      const std::size_t n = early["time_ns"].size();
      CHECK(n <= 512);
      CHECK(width == (spread ? 8000 : 1000));
      CHECK((n - 1) * width <= end);  // the last bucket holds the run's end
      CHECK(n * width > end);
      // every figure is the one the table gives a range of 512 buckets of the same width
      const json exact =
          body_of(server::api_timeline(data, "1", params({{"from", "0"}, {"to", std::to_string(512 * width - 1)}})));
      REQUIRE(exact["bucket_ns"] == width);
      for (const char* column : {"time_ns", "heap_bytes", "heap_max_bytes", "live_count", "alloc_count", "free_count",
                                 "temporary_count", "rss_bytes"}) {
        CAPTURE(column);
        const json& all = exact[column];
        CHECK(early[column] == json(std::vector<json>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n))));
      }
      CHECK(early["recording"] == body_of(server::api_timeline(data, "1", params({})))["recording"]);
      std::uint64_t allocs = 0;
      std::uint64_t frees = 0;
      for (std::size_t i = 0; i < n; ++i) {
        allocs += early["alloc_count"][i].get<std::uint64_t>();
        frees += early["free_count"][i].get<std::uint64_t>();
      }
      CHECK(allocs == data.dumps[0].report.totals.allocations);
      CHECK(frees == data.dumps[0].report.totals.frees);
      if (spread) {
        CHECK(data.dumps[0].report.totals.unmatched_frees == 501);
        CHECK(data.dumps[0].report.totals.replaced_blocks == 1);
        CHECK(std::any_of(early["rss_bytes"].begin(), early["rss_bytes"].end(),
                          [](const json& v) { return v == 6 << 20; }));
      }
      // a range still waits for the table
      check_building(server::api_timeline(data, "0", params({{"from", "0"}, {"to", "20000"}})), 25);
      // and a table that will not come leaves the early timeline, saying why
      server::ViewData failed;
      failed.dumps.push_back(load_early(path, symbolizer));
      failed.dumps[0].slot->fail("it changed.");
      const json kept = body_of(server::api_timeline(failed, "0", params({})));
      CHECK(kept["table"] == json{{"state", "failed"}, {"error", "it changed."}});
      CHECK(kept["heap_bytes"] == early["heap_bytes"]);

      // and once the table is there, the whole run's timeline is the table's
      AllocationTableBuilder later;
      REQUIRE(replay_into(path, LoadOptions{2}, later).ok());
      publish(data.dumps[0], later);
      CHECK(body_of(server::api_timeline(data, "0", params({}))) ==
            body_of(server::api_timeline(data, "1", params({}))));
    }
  }

  TEST_CASE("the timeline's temporary allocations sum to the summary's for any range, before the table too") {
    // given a dump of 530 temporary allocations, some of them held across the edges of the ranges asked
    const std::string path = temporaries_dump();
    Symbolizer symbolizer(SymbolizerOptions{{}, 1});
    server::ViewData data;
    AllocationTableBuilder beside;
    data.dumps.push_back(load(path, symbolizer, &beside));
    publish(data.dumps[0], beside);
    data.dumps.push_back(load_early(path, symbolizer));
    REQUIRE(data.dumps[0].slot->table()->checkpoints().size() > 2);
    const auto sum = [](const json& timeline) {
      std::uint64_t n = 0;
      for (const json& c : timeline["temporary_count"]) n += c.get<std::uint64_t>();
      return n;
    };
    // when the whole run's timeline is asked for, from the table and from the report's pass
    // then both hold the 530
    CHECK(body_of(server::api_summary(data, "0", params({})))["temporary"] == 530);
    CHECK(sum(body_of(server::api_timeline(data, "0", params({})))) == 530);
    CHECK(sum(body_of(server::api_timeline(data, "1", params({})))) == 530);
    // and for every range, the buckets sum to the range's summary: a temporary
    // allocation counts when both its allocation and its free are in the range
    const std::uint64_t edges[] = {0,       7,       500,       40'099,    40'100,    123'456,  500'000,
                                   777'777, 999'999, 1'000'000, 1'250'040, 1'499'999, 1'600'000};
    // (the temporaries_dump's own, allocated and freed within [from, to])
    const auto known = [](std::uint64_t from, std::uint64_t to) {
      std::uint64_t n = 0;
      for (std::uint64_t i = 0; i < 1500; i += 3) n += from <= 1000 * i + 7 && 1000 * i + 500 <= to ? 1 : 0;
      for (std::uint64_t j = 0; j < 30; ++j) n += from <= 50'000 * j + 100 && 50'000 * j + 40'100 <= to ? 1 : 0;
      return n;
    };
    for (const std::uint64_t from : edges) {
      for (const std::uint64_t to : edges) {
        if (to < from) continue;
        CAPTURE(from);
        CAPTURE(to);
        const auto range = params({{"from", std::to_string(from)}, {"to", std::to_string(to)}});
        const json timeline = body_of(server::api_timeline(data, "0", range));
        CHECK(body_of(server::api_summary(data, "0", range))["temporary"] == known(from, to));
        CHECK(sum(timeline) == known(from, to));
        for (std::size_t i = 0; i < timeline["temporary_count"].size(); ++i)
          CHECK(timeline["temporary_count"][i] <= timeline["free_count"][i]);
      }
    }
  }

  TEST_CASE("a table that will not come says why, and nothing waits for it") {
    const std::string path = churn_dump();
    Symbolizer symbolizer(SymbolizerOptions{{}, 1});
    server::ViewData data;
    data.dumps.push_back(load(path, symbolizer, nullptr));
    data.dumps[0].slot->fail("view_api.dat changed since its report was read.");

    const auto a = server::api_timeline(data, "0", params({}));
    REQUIRE(a.error);
    CHECK(a.error->status == 500);
    CHECK_FALSE(a.error->building_percent);
    CHECK(a.error->message.find("view_api.dat changed since its report was read.") != std::string::npos);
    CHECK(body_of(server::api_dumps(data))["dumps"][0]["table"] ==
          json{{"state", "failed"}, {"error", "view_api.dat changed since its report was read."}});
    const json sites = body_of(server::api_sites(data, "0", params({{"sort", "allocated"}, {"spark", "8"}})));
    CHECK(sites["table"]["state"] == "failed");
    CHECK(sites["sites"].size() == 3);
  }

  TEST_CASE("a dump still loading is listed with its bytes and answers 503; a failed one says why; the rest answer") {
    // given three files given to memrec view: one served, one loading, one that failed
    const std::string path = churn_dump();
    Symbolizer symbolizer(SymbolizerOptions{{}, 1});
    server::ViewData data;
    data.dumps.push_back(load(path, symbolizer, nullptr));
    data.dumps.resize(3);
    for (const char* file : {"a.dat", "big.dat", "bad.dat"})
      data.loads.push_back(std::make_unique<server::DumpLoad>(file));
    data.loads[0]->ready();
    data.loads[1]->progress(300, 1000);
    data.loads[2]->fail("bad.dat: not a memrec dump (bad magic)");

    // then the list names each state, the loading one with its bytes only
    const json list = body_of(server::api_dumps(data))["dumps"];
    CHECK(list[0]["load"] == json{{"state", "ready"}});
    CHECK(list[0]["pid"].is_number());
    CHECK(list[1] ==
          json{{"id", 1},
               {"file", "big.dat"},
               {"state", "loading"},
               {"load", {{"state", "loading"}, {"fraction", 0.3}, {"bytes_read", 300}, {"bytes_total", 1000}}}});
    CHECK(list[2] == json{{"id", 2},
                          {"file", "bad.dat"},
                          {"state", "failed"},
                          {"load", {{"state", "failed"}, {"error", "bad.dat: not a memrec dump (bad magic)"}}}});
    // and the loading dump's endpoints answer 503 with the percent, the failed one's 500 with why
    const auto loading = server::api_summary(data, "1", params({}));
    REQUIRE(loading.error);
    CHECK(loading.error->status == 503);
    CHECK(loading.error->loading_percent == 30u);
    CHECK(loading.error->message == "Dump 1 (big.dat) is still loading (30 %): ask again in a few seconds.");
    const auto diff = server::api_diff_sites(data, params({{"base", "0"}, {"new", "1"}}));
    REQUIRE(diff.error);
    CHECK(diff.error->status == 503);
    const auto failed = server::api_sites(data, "2", params({}));
    REQUIRE(failed.error);
    CHECK(failed.error->status == 500);
    CHECK(failed.error->message == "Dump 2 did not load: bad.dat: not a memrec dump (bad magic)");
    // while the served one answers, pprof's default among them
    CHECK_FALSE(server::api_summary(data, "0", params({})).error);
    // (pprof's default is dump 0, the one served: the whole run's heap needs no table)
    CHECK_FALSE(server::api_pprof(data, server::PprofProfile::kHeap, params({})).error);

    // when the load ends, the dump is served and its fraction is whole
    data.loads[1]->ready();
    CHECK(data.loads[1]->fraction() == 1.0);
  }

  TEST_CASE("the load budget splits --threads between the dumps loading at once") {
    CHECK(load_budget(3, 2).at_once == 2);
    CHECK(load_budget(3, 2).threads_each == 1);
    CHECK(load_budget(1, 2).at_once == 1);
    CHECK(load_budget(1, 2).threads_each == 2);
    CHECK(load_budget(2, 8).threads_each == 4);
    CHECK(load_budget(3, 8).threads_each == 2);
    CHECK(load_budget(5, 1).at_once == 1);
  }

  TEST_CASE("the second pass reads what the report read of a file still being written") {
    // given a dump whose second frame was written after its report was read
    testing::DumpBuilder b;
    const std::uint64_t s1[] = {0x401000};
    b.frame([&](format::RecordEncoder& e) {
      e.stack(1, 0, 0, s1);
      e.thread(10);
      for (std::uint64_t i = 0; i < 5; ++i) e.alloc(AllocFn::kMalloc, kT0 + 10 * i, 0x10000 + 0x100 * i, 8, 1);
    });
    b.frame([&](format::RecordEncoder& e) {
      e.thread(10);
      for (std::uint64_t i = 0; i < 5; ++i) e.free(kT0 + 100 + i, 0x10000 + 0x100 * i);
    });
    const std::vector<std::byte> first(b.bytes().begin(),
                                       b.bytes().begin() + static_cast<std::ptrdiff_t>(b.frame_ends()[0]));
    const std::string path = testing::write_temp_file(first, "growing.dat");
    Symbolizer symbolizer(SymbolizerOptions{{}, 1});
    const server::ViewDump d = load(path, symbolizer, nullptr);
    REQUIRE(d.report.totals.allocations == 5);
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(b.bytes().data()), static_cast<std::streamsize>(b.bytes().size()));

    // then a pass limited to the report's bytes reads its events again, and an unlimited one more
    LoadOptions limited{2};
    limited.file_bytes = d.report.dump.facts.file_bytes;
    AllocationTableBuilder table;
    const auto run = replay_into(path, limited, table);
    REQUIRE(run.ok());
    CHECK(run->events == d.report.events);
    CHECK(run->totals.frees == 0);
    AllocationTableBuilder whole;
    const auto all = replay_into(path, LoadOptions{2}, whole);
    REQUIRE(all.ok());
    CHECK(all->events == d.report.events + 5);
    CHECK(all->totals.frees == 5);
  }

  TEST_CASE("the table of the second pass answers as the one built beside the report") {
    const std::string path = churn_dump();
    Symbolizer symbolizer(SymbolizerOptions{{}, 1});
    server::ViewData data;
    AllocationTableBuilder beside;
    data.dumps.push_back(load(path, symbolizer, &beside));
    publish(data.dumps[0], beside);
    data.dumps.push_back(load(path, symbolizer, nullptr));
    AllocationTableBuilder later;
    const auto run = replay_into(path, LoadOptions{2}, later);
    REQUIRE(run.ok());
    CHECK(run->events == data.dumps[1].report.events);
    CHECK(run->totals.allocations == 24);
    CHECK(run->totals.frees == data.dumps[1].report.totals.frees);
    publish(data.dumps[1], later);
    CHECK(data.dumps[1].slot->percent() == 100);

    const std::string mid = std::to_string(20'000);
    const std::vector<std::map<std::string, std::string>> asks = {
        {}, {{"from", "0"}, {"to", mid}}, {{"from", mid}}, {{"at", mid}}, {{"at", "33500"}}};
    for (const auto& ask : asks) {
      CAPTURE(json(ask).dump());
      for (const char* id : {"0", "1"}) {
        CHECK(body_of(server::api_dumps(data))["dumps"][std::stoi(id)]["table"] == json{{"state", "ready"}});
      }
      auto both = [&](auto fn) { CHECK(fn("0") == fn("1")); };
      const bool at = ask.contains("at");
      if (!at) {
        both([&](const char* id) { return body_of(server::api_summary(data, id, params(ask))); });
        both([&](const char* id) { return body_of(server::api_timeline(data, id, params(ask))); });
        both([&](const char* id) { return body_of(server::api_allocations(data, id, params(ask))); });
      }
      auto with = [&](std::map<std::string, std::string> more) {
        more.insert(ask.begin(), ask.end());
        return params(more);
      };
      both([&](const char* id) {
        return body_of(server::api_sites(data, id, with({{"sort", at ? "live" : "allocated"}, {"spark", "8"}})));
      });
      if (at) {
        both([&](const char* id) { return body_of(server::api_instant(data, id, params(ask))); });
        both([&](const char* id) { return body_of(server::api_flame(data, id, with({{"metric", "live"}}))); });
        both([&](const char* id) { return body_of(server::api_site(data, id, "0", params(ask))); });
        both([&](const char* id) {
          return body_of(server::api_allocations(data, id, with({{"alive_at", ask.at("at")}})));
        });
      }
    }
    for (std::uint32_t row = 0; row < 24; ++row) {
      const std::string r = std::to_string(row);
      CHECK(body_of(server::api_allocation(data, "0", r, params({}))) ==
            body_of(server::api_allocation(data, "1", r, params({}))));
    }
    // The spark rows exist once the table is there.
    const json sites = body_of(server::api_sites(data, "1", params({{"sort", "allocated"}, {"spark", "8"}})));
    CHECK(sites["sites"][0]["spark"].size() == 8);
    CHECK_FALSE(sites.contains("table"));
  }
}
