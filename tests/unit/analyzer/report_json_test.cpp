// The report --json document (schema memrec-report v2) from hand-made call
// sites: each listed site once, each distinct frame once, rankings as indices.
#include <doctest/doctest.h>

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "reports/report_output.h"

using namespace memrec::analyzer;
using nlohmann::json;

namespace {

// Three sites sharing `main`: `leak` (leaks 300 bytes), `temp` (many small
// temporaries) and a runtime site; frame 4 belongs to no site.
HeapReport three_sites() {
  HeapReport r;
  r.dump.path = "a.dat";
  r.dump.header.pid = 7;
  r.dump.header.exe_path =
      "/bin/\xFF"
      "a";  // not UTF-8
  r.sites.frames = {{"leak", "a.c", 3, "/bin/a", 0x10, false},
                    {"main", "a.c", 9, "/bin/a", 0x30, false},
                    {"temp", "a.c", 5, "/bin/a", 0x20, true},
                    {"", "", 0, "/lib/libc.so", 0x99, false},
                    {"unused", "b.c", 1, "/bin/a", 0x40, false}};
  CallSite leak;
  leak.frames = {0, 1};
  leak.allocations = 3;
  leak.allocated_bytes = 300;
  leak.leaked_bytes = 300;
  leak.leaked_count = 3;
  leak.peak_bytes = 300;
  CallSite temp;
  temp.frames = {2, 2, 1};
  temp.allocations = 50;
  temp.allocated_bytes = 500;
  temp.temporary = 50;
  temp.peak_bytes = 10;
  CallSite runtime;
  runtime.frames = {3, 1};
  runtime.runtime = true;
  runtime.runtime_function = "_IO_file_doallocate";
  runtime.allocations = 1;
  runtime.allocated_bytes = 4096;
  runtime.leaked_bytes = 4096;
  runtime.leaked_count = 1;
  r.sites.sites = {runtime, temp, leak};
  return r;
}

json document(const std::vector<HeapReport>& reports, std::size_t top) {
  std::ostringstream out;
  REQUIRE(write_report_json(out, reports, {ProcessNode{}}, top, {"a warning"}));
  return json::parse(out.str());
}

}  // namespace

TEST_SUITE("analyzer/report_json") {
  TEST_CASE("lists each site once and each ranking as site indices in rank order") {
    std::vector<HeapReport> reports;
    reports.push_back(three_sites());
    const json doc = document(reports, 10);
    CHECK(doc["schema"] == "memrec-report");
    CHECK(doc["version"] == 3);
    CHECK(doc["warnings"] == json{"a warning"});
    const json& p = doc["processes"][0];
    CHECK(p["exe"] ==
          "/bin/\xEF\xBF\xBD"
          "a");
    const json& rep = p["report"];
    // Sites are numbered as first ranked: leaked's leak, then peak's temp, then the runtime site.
    const json& sites = rep["sites"];
    REQUIRE(sites.size() == 3);
    CHECK(rep["rankings"]["leaked"] == json{0});
    CHECK(rep["rankings"]["peak"] == json{0, 1});
    CHECK(rep["rankings"]["allocated"] == json{2, 1, 0});
    CHECK(rep["rankings"]["allocations"] == json{1, 0, 2});
    CHECK(rep["rankings"]["temporary"] == json{1});
    CHECK(rep["rankings"]["runtime_retained"] == json{2});
    CHECK(sites[0]["leaked_bytes"] == 300);
    CHECK(sites[1]["temporary"] == 50);
    CHECK(sites[2]["runtime_retained_bytes"] == 4096);
    CHECK(sites[2]["leaked_bytes"] == 0);
    CHECK(sites[2]["runtime_function"] == "_IO_file_doallocate");
  }

  TEST_CASE("lists each distinct frame of the listed sites once, sites pointing into the table") {
    std::vector<HeapReport> reports;
    reports.push_back(three_sites());
    const json rep = document(reports, 10)["processes"][0]["report"];
    const json& frames = rep["frames"];
    // Numbered as first used: leak, main, temp, libc; `unused` is left out.
    REQUIRE(frames.size() == 4);
    CHECK(frames[0] == json{{"function", "leak"},
                            {"file", "a.c"},
                            {"line", 3},
                            {"module", "/bin/a"},
                            {"offset", 0x10},
                            {"inlined", false},
                            {"label", "leak"}});
    CHECK(frames[2]["inlined"] == true);
    CHECK(frames[3]["function"].is_null());
    CHECK(frames[3]["label"] == "libc.so+0x99");
    CHECK(rep["sites"][0]["frames"] == json{0, 1});
    CHECK(rep["sites"][1]["frames"] == json{2, 2, 1});
    CHECK(rep["sites"][2]["frames"] == json{3, 1});
    std::set<std::string> distinct;
    for (const json& f : frames) distinct.insert(f.dump());
    CHECK(distinct.size() == frames.size());
  }

  TEST_CASE("top cuts each ranking, and only sites some ranking lists are written") {
    std::vector<HeapReport> reports;
    reports.push_back(three_sites());
    const json rep = document(reports, 1)["processes"][0]["report"];
    // leak (leaked, peak), then the runtime site (allocated), then temp (allocations)
    CHECK(rep["rankings"]["peak"] == json{0});
    CHECK(rep["rankings"]["allocated"] == json{1});
    CHECK(rep["rankings"]["allocations"] == json{2});
    CHECK(rep["sites"].size() == 3);
    const json none = document(reports, 0)["processes"][0]["report"];
    CHECK(none["sites"] == json::array());
    CHECK(none["frames"] == json::array());
    CHECK(none["rankings"]["leaked"] == json::array());
  }
}
