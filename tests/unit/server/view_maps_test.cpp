// memrec view's /maps (server/view_maps.cpp) on a dump built in memory:
// mappings made and cut on two threads in merged order, an mremap, a stack
// the dump never defined, and a mapping that runs into the end of the address
// space; a dump loaded without its mappings says so. No allocation table is
// published: /maps answers without one (a dump served before its table).
#include <doctest/doctest.h>

#include <string>

#include "model/mapping_record.h"
#include "reports/heap_report.h"
#include "server/view_api.h"
#include "server/view_model.h"
#include "support/dump_builder.h"
#include "symbolize/symbolizer.h"

using namespace memrec;
using namespace memrec::analyzer;
using nlohmann::json;

namespace {

constexpr std::uint64_t kT0 = 1'000'000;  // sample_header's start_mono_ns
constexpr std::uint32_t kRw = 3;          // PROT_READ | PROT_WRITE
constexpr std::uint32_t kAnon = 0x22;     // MAP_PRIVATE | MAP_ANONYMOUS
constexpr std::uint64_t kTop = ~0ull - 0xfff;

std::string maps_dump() {
  testing::DumpBuilder b;
  const std::uint64_t s1[] = {0x401000, 0x402000};
  b.frame([&](format::RecordEncoder& e) {
    e.stack(1, 0, 0, s1);
    e.thread(10);
    e.mmap(kT0 + 1000, 0x70000000, 0x4000, kRw, kAnon, 1);
    e.thread(11);
    e.munmap(kT0 + 2000, 0x70001000, 0x1000);                 // splits the first in two
    e.mmap(kT0 + 3000, 0x80000000, 0x2000, kRw, kAnon, 999);  // a stack never defined
    e.thread(10);
    e.mremap(kT0 + 4000, 0x80000000, 0x2000, kT0 + 4001, 0x90000000, 0x6000, 1);
    e.mmap(kT0 + 5000, kTop, 0x10000, kRw, kAnon, 1);  // only 0xfff bytes lie below 2^64
    e.end(kT0 + 10'000);
  });
  return testing::write_temp_file(b.bytes(), "view_maps.dat");
}

server::ParamFn no_params() {
  return [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
}

}  // namespace

TEST_SUITE("server/view_maps") {
  TEST_CASE("the mappings, their stacks and the series are exact, whatever the threads and ids") {
    const std::string path = maps_dump();
    Symbolizer symbolizer(SymbolizerOptions{});
    MappingRecord mappings(kT0);
    auto report =
        build_heap_report(path, RelativeWindow{}, LoadOptions{2}, symbolizer, nullptr, nullptr, nullptr, &mappings);
    REQUIRE(report.ok());
    server::ViewData data;
    data.dumps.emplace_back();
    server::ViewDump& d = data.dumps.back();
    d.report = std::move(*report);
    mappings.extend_to(d.end_ns());
    d.mappings = std::move(mappings);

    const server::ApiAnswer a = server::api_maps(data, "0", no_params());
    REQUIRE_MESSAGE(!a.error, a.error->message);
    const json& t = a.body["totals"];
    CHECK(t["mmaps"] == 3);
    CHECK(t["mremaps"] == 1);
    CHECK(t["munmaps"] == 1);
    CHECK(t["missed_munmaps"] == 0);
    CHECK(t["live_bytes"] == 0x1000 + 0x2000 + 0x6000 + 0xfff);
    CHECK(t["live_count"] == 4);
    CHECK(t["mapped_bytes"] == 0x4000 + 0x2000 + 0x6000 + 0xfff);
    CHECK(t["unmapped_bytes"] == 0x1000 + 0x2000);
    CHECK(t["peak_bytes"] == 0x9fff);
    CHECK(t["peak_at_ns"] == 5000);

    const json& m = a.body["mappings"];
    REQUIRE(m.size() == 4);
    CHECK(m[0]["address"] == "0x90000000");
    CHECK(m[0]["size_bytes"] == 0x6000);
    CHECK(m[0]["mapped_at_ns"] == 4001);
    CHECK(m[1]["address"] == "0x70002000");  // the split's upper piece keeps the first's time
    CHECK(m[1]["mapped_at_ns"] == 1000);
    CHECK(m[2]["address"] == "0x70000000");
    CHECK(m[3]["address"] == "0xfffffffffffff000");
    CHECK(m[3]["size_bytes"] == 0xfff);
    for (const json& row : m) CHECK(row["frames"].size() == 2);

    const json& s = a.body["stacks"];
    REQUIRE(s.size() == 2);
    CHECK(s[0]["stack"] == 1);
    CHECK(s[0]["mmaps"] == 2);
    CHECK(s[0]["mremaps"] == 1);
    CHECK(s[0]["live_bytes"] == 0x9fff);
    CHECK(s[0]["live_count"] == 4);
    CHECK(s[0]["peak_bytes"] == 0x9fff);
    CHECK(s[1]["stack"] == 999);
    CHECK(s[1]["site"].is_null());
    CHECK(s[1]["label"].is_null());
    CHECK(s[1]["frames"].empty());
    CHECK(s[1]["mapped_bytes"] == 0x2000);
    CHECK(s[1]["unmapped_bytes"] == 0x2000);
    CHECK(s[1]["first_ns"] == 3000);
    CHECK(s[1]["last_ns"] == 4000);

    const json& series = a.body["series"];
    CHECK(series["mapped_bytes"].back() == 0x9fff);
    CHECK(series["live_count"].back() == 4);
    std::uint64_t maps = 0;
    std::uint64_t releases = 0;
    for (const json& n : series["map_count"]) maps += n.get<std::uint64_t>();
    for (const json& n : series["unmap_count"]) releases += n.get<std::uint64_t>();
    CHECK(maps == 4);      // three mmaps and the mremap's new range
    CHECK(releases == 2);  // the munmap and the mremap's old range
  }

  TEST_CASE("a dump loaded without its mappings answers 404") {
    server::ViewData data;
    data.dumps.emplace_back();
    const server::ApiAnswer a = server::api_maps(data, "0", no_params());
    REQUIRE(a.error);
    CHECK(a.error->status == 404);
  }
}
