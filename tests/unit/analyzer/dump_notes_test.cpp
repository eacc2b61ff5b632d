// The notes a dump gets when the program's malloc was not the recorder's or
// the program took the toggle signal over, from dumps built with the encoder.
#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "reports/dump_notes.h"
#include "reports/info_report.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::analyzer;
using format::Counter;
using memrec::testing::DumpBuilder;

namespace {

constexpr std::uint64_t kT0 = 1'000'000;  // sample_header's start_mono_ns
constexpr std::uint64_t kExeBias = 0x555555554000;
constexpr std::uint64_t kLibBias = 0x7ffff7dd0000;

struct Shape {
  std::vector<format::CounterValue> counters;
  std::vector<bool> toggles;  // Recording records, 1 ms apart from kT0 + 1 ms
  int allocs = 0;
};

// A dump of /usr/bin/demo (its exe_path) with libtcmalloc.so.4 loaded at
// start, shaped as asked.
std::vector<DumpNote> notes_of(const Shape& shape) {
  DumpBuilder b;
  const format::Segment segs[] = {{0x1000, 0x2000, 0x1000, format::kSegmentExec | format::kSegmentRead}};
  b.frame([&](format::RecordEncoder& e) {
    e.module_load(1, 1, "/usr/bin/demo", kExeBias, {}, segs);
    e.module_load(2, 1, "/usr/lib/x86_64-linux-gnu/libtcmalloc.so.4", kLibBias, {}, segs);
    std::uint64_t t = kT0;
    for (const bool on : shape.toggles) e.recording(t += 1'000'000, on);
    e.thread_start(10, kT0 + 5, "demo");
    e.thread(10);
    for (int i = 0; i < shape.allocs; ++i) e.alloc(format::AllocFn::kMalloc, kT0 + 10 + i, 0x1000 + 0x100 * i, 8, 0);
    e.counters(shape.counters);
    e.end(kT0 + 900'000'000);
  });
  auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "notes.dat"));
  REQUIRE(dump.ok());
  auto report = build_info_report(std::move(*dump), LoadOptions{1});
  REQUIRE(report.ok());
  return dump_notes(report->dump);
}

}  // namespace

TEST_SUITE("analyzer/dump_notes") {
  TEST_CASE("a dump without the takeover counters has no notes") {
    CHECK(notes_of({{{Counter::kEvents, 3}}, {}, 3}).empty());
    CHECK(dump_notes_json({}) == nlohmann::json::array());
  }

  TEST_CASE("a malloc in another library is named, and nothing recorded says so") {
    const auto notes = notes_of({{{Counter::kForeignMalloc, kLibBias + 0x1234}}, {}, 0});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].kind == "foreign_malloc");
    CHECK(notes[0].message ==
          "the program's malloc is libtcmalloc.so.4's, not memrec's: nothing was recorded; put libmemrec.so first "
          "in LD_PRELOAD");
    CHECK(dump_notes_json(notes) ==
          nlohmann::json::array({{{"kind", "foreign_malloc"}, {"message", notes[0].message}, {"time_ns", nullptr}}}));
  }

  TEST_CASE("a malloc in the executable needs no LD_PRELOAD advice; allocations that got through are counted") {
    const auto notes = notes_of({{{Counter::kForeignMalloc, kExeBias + 0x1100}}, {}, 2});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].message ==
          "the program's malloc is its own (in its executable), not memrec's: only the allocations that reached "
          "memrec's malloc were recorded");
  }

  TEST_CASE("a malloc at an address no module holds is named by its address") {
    const auto notes = notes_of({{{Counter::kForeignMalloc, 0x10000}}, {}, 0});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].message.starts_with("the program's malloc is the code at 0x10000, not memrec's"));
  }

  TEST_CASE("a toggle taken over while recording started off and never recorded: recording stayed off") {
    const auto notes = notes_of({{{Counter::kToggleTakenNs, kT0 + 250'000'000}}, {false}, 0});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].kind == "recording_stayed_off");
    CHECK(notes[0].message ==
          "recording stayed off: the program took over SIGUSR1; use MEMREC_SIGNAL to pick a signal it leaves alone");
    CHECK(notes[0].time_ns == 250'000'000);
  }

  TEST_CASE("a toggle taken over while recording: the softer note, with its time") {
    const auto notes = notes_of({{{Counter::kToggleTakenNs, kT0 + 1'200'000'000}}, {false, true}, 4});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].kind == "toggle_taken_over");
    CHECK(notes[0].message == "the program took over SIGUSR1 at 1.200 s: the toggle no longer worked after that");
  }

  TEST_CASE("a toggle taken over before the start (a fork child's inheritance) has no time") {
    const auto notes = notes_of({{{Counter::kToggleTakenNs, kT0 - 5}}, {}, 1});
    REQUIRE(notes.size() == 1);
    CHECK(notes[0].message ==
          "the program took over SIGUSR1 before this process started: the toggle no longer worked after that");
    CHECK(notes[0].time_ns == std::nullopt);
  }

  TEST_CASE("a program handler that passes the toggle on to the recorder's gets no note") {
    CHECK(notes_of({{{Counter::kToggleTakenNs, kT0 + 10}, {Counter::kToggleChained, 2}}, {false, true}, 1}).empty());
  }

  TEST_CASE("both notes come, malloc first") {
    const auto notes =
        notes_of({{{Counter::kForeignMalloc, kLibBias + 0x1234}, {Counter::kToggleTakenNs, kT0 + 10}}, {}, 0});
    REQUIRE(notes.size() == 2);
    CHECK(notes[0].kind == "foreign_malloc");
    CHECK(notes[1].kind == "toggle_taken_over");
  }
}
