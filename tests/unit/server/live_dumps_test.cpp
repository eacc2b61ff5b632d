// memrec view --follow's dumps: a watched directory's new dumps join, a
// dump's figures grow with its file, and it ends live, ended or cut.
#include <doctest/doctest.h>

#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "model/window_figures.h"
#include "server/live_dumps.h"
#include "support/growing_dump.h"

using namespace memrec;
using namespace memrec::analyzer;
using namespace memrec::analyzer::server;
using memrec::testing::DumpBuilder;
using memrec::testing::interleaved_dump;
using memrec::testing::write_prefix;

namespace {

std::uint64_t mono_now_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// A dump this test process is writing: its header names this process.
DumpBuilder own_dump(unsigned seed, bool end) {
  format::FileHeaderFields fields = memrec::testing::sample_header();
  fields.pid = static_cast<std::uint64_t>(getpid());
  fields.start_mono_ns = mono_now_ns();
  return interleaved_dump(seed, 2, end, fields);
}

}  // namespace

TEST_SUITE("server/live_dumps") {
  TEST_CASE("a watched directory's dumps join as they appear and grow live until they end or are cut") {
    const auto dir = std::filesystem::temp_directory_path() / ("live-dumps." + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string first = (dir / "a.dat").string();
    const std::string second = (dir / "b.dat").string();
    const std::string gone = (dir / "c.dat").string();
    const DumpBuilder a = own_dump(1, /*end=*/true);
    const DumpBuilder b = own_dump(2, /*end=*/false);
    const DumpBuilder c = interleaved_dump(3, 2, /*end=*/false);  // pid 4242's, at boot: not this process
    FollowOptions options;
    options.load.threads = 1;
    options.hold_back_ns = 0;
    LiveDumps live({dir.string()}, options);
    Symbolizer symbolizer(SymbolizerOptions{});

    // given a.dat's first half
    write_prefix(first, a.bytes(), a.frame_ends()[a.frame_ends().size() / 2]);
    CHECK(live.poll() == std::vector<std::size_t>{0});
    REQUIRE(live.size() == 1);
    CHECK(live.state(0) == DumpState::kLive);
    const std::uint64_t half = live.snapshot(0, symbolizer).report.totals.allocations;
    CHECK(half > 0);

    // when the rest of a.dat comes, and b.dat (still written) and c.dat (its process gone) appear
    write_prefix(first, a.bytes(), a.bytes().size());
    write_prefix(second, b.bytes(), b.frame_ends()[2]);
    write_prefix(gone, c.bytes(), c.bytes().size());
    CHECK(live.poll() == std::vector<std::size_t>{0, 1, 2});
    REQUIRE(live.size() == 3);
    // then a.dat grew to its end and is ended, b.dat is live, c.dat is cut
    ViewDump ended = live.snapshot(0, symbolizer);
    live.publish(0, ended);
    CHECK(ended.report.totals.allocations > half);
    CHECK(live.state(0) == DumpState::kEnded);
    CHECK(live.state(1) == DumpState::kLive);
    CHECK(live.state(2) == DumpState::kCut);
    CHECK(live.path(1) == second);
    CHECK(ended.early_timeline.has_value());
    // with its allocation table, no longer followed
    REQUIRE(ended.table() != nullptr);
    CHECK(!ended.followed_edge_ns.has_value());
    ViewDump growing = live.snapshot(1, symbolizer);
    live.publish(1, growing);
    REQUIRE(growing.table() != nullptr);
    CHECK(growing.followed_edge_ns.has_value());

    // and the ended dump's figures are those of its finished file
    LoadOptions load;
    load.threads = 1;
    const auto whole = build_heap_report(first, {}, load, symbolizer);
    REQUIRE(whole.ok());
    CHECK(ended.report.totals.allocations == whole->totals.allocations);
    CHECK(ended.report.totals.peak_bytes == whole->totals.peak_bytes);
    CHECK(ended.report.leaked_bytes == whole->leaked_bytes);
    CHECK(ended.report.events == whole->events);
    // and so are its table's, over the whole run and per site
    const WindowFigures figures = window_figures(*ended.table(), TimeWindow{});
    CHECK(ended.table()->rows() == whole->totals.allocations);
    CHECK(figures.totals.peak_bytes == whole->totals.peak_bytes);
    CHECK(figures.totals.frees == whole->totals.frees);
    REQUIRE(figures.sites.size() == ended.report.sites.sites.size());
    for (std::size_t s = 0; s < figures.sites.size(); ++s) {
      CHECK(figures.sites[s].allocated_bytes == ended.report.sites.sites[s].allocated_bytes);
      CHECK(figures.sites[s].leaked_bytes == ended.report.sites.sites[s].leaked_bytes);
    }

    // and a poll with nothing new changes nothing
    CHECK(live.poll().empty());
    std::filesystem::remove_all(dir);
  }
}
