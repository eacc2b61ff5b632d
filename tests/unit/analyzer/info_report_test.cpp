// `memrec info` end to end on dumps built with the encoder: the JSON schema,
// leak grouping and module resolution, and the exit codes of run_info.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "common/exit_codes.h"
#include "load/dump_loader.h"
#include "memrec/format/recorder_threads.h"
#include "reports/info_command.h"
#include "reports/info_report.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::analyzer;
using format::AllocFn;
using memrec::testing::DumpBuilder;
using nlohmann::json;

namespace {

constexpr std::uint64_t kT0 = 1'000'000;  // sample_header's start_mono_ns
constexpr std::uint64_t kExeBias = 0x555555554000;
constexpr std::uint64_t kLibBias = 0x7ffff7dd0000;

// Two threads, two modules (the second loaded at generation 2), three stacks:
// leaks 3 x 4242 bytes from stack 1 and 100 bytes from stack 2.
DumpBuilder leaky_dump(bool clean_end) {
  DumpBuilder b;
  const format::Segment exe_segs[] = {{0x1000, 0x2000, 0x1000, format::kSegmentExec | format::kSegmentRead}};
  const format::Segment lib_segs[] = {{0x0, 0x10000, 0, format::kSegmentExec | format::kSegmentRead}};
  const std::byte build_id[] = {std::byte{0xab}, std::byte{0x01}};
  const std::uint64_t stack1[] = {kExeBias + 0x1200, kExeBias + 0x1100};
  const std::uint64_t stack2[] = {kLibBias + 0x50, 0x1234};  // lib at gen 1 + 1; the second ip is in no module
  b.frame([&](format::RecordEncoder& e) {
    e.module_load(1, 1, "/tmp/leak_three", kExeBias, build_id, exe_segs);
    e.stack(1, 1, 0, stack1);
    e.stack(2, 1, format::kStackTruncated, stack2);
    e.thread_start(10, kT0 + 5, "leak_three");
    e.thread(10);
    for (std::uint64_t i = 0; i < 3; ++i) e.alloc(AllocFn::kMalloc, kT0 + 10 + i, 0x1000 + 0x100 * i, 4242, 1);
    e.alloc(AllocFn::kCalloc, kT0 + 20, 0x9000, 7, 0);
    e.free(kT0 + 21, 0x9000);
    e.free(kT0 + 22, 0xdead);  // unknown: counted
    e.mmap(kT0 + 23, 0x7f0000000000, 8192, 3, 0x22, 0);
    e.munmap(kT0 + 24, 0x7f0000000000, 4096);
    const format::CounterValue c[] = {{format::Counter::kEvents, 9}, {static_cast<format::Counter>(77), 1}};
    e.counters(c);
  });
  b.frame([&](format::RecordEncoder& e) {
    e.module_load(2, 2, "/usr/lib/libfoo.so", kLibBias, {}, lib_segs);
    e.thread_start(11, kT0 + 30, "worker");
    e.thread(11);
    e.alloc(AllocFn::kMalloc, kT0 + 31, 0x5000, 10, 2);
    e.realloc(AllocFn::kRealloc, kT0 + 32, 0x5000, kT0 + 33, 0x6000, 100, 2);
    e.rss(kT0 + 34, 1 << 20);
    e.recording(kT0 + 35, false);
    e.thread_exit(11, kT0 + 36);
    e.module_unload(2, 3);
    const format::CounterValue c[] = {{format::Counter::kEvents, 13}, {format::Counter::kFrames, 2}};
    e.counters(c);
    if (clean_end) e.end(kT0 + 40);
  });
  return b;
}

json info_of(const std::vector<std::byte>& bytes) {
  auto dump = reader::open_dump(reader::MappedFile::from_bytes(bytes, "leaky.dat"));
  REQUIRE(dump.ok());
  auto report = build_info_report(std::move(*dump), LoadOptions{2});
  REQUIRE(report.ok());
  return info_json(*report);
}

}  // namespace

TEST_SUITE("analyzer/info_report") {
  TEST_CASE("summarizes a clean dump with the documented JSON names") {
    const DumpBuilder b = leaky_dump(true);
    const json j = info_of(b.bytes());
    CHECK(j["file"] == "leaky.dat");
    CHECK(j["format_version"] == 9);
    CHECK(j["markers"] == json::array());
    CHECK(j["file_bytes"] == b.bytes().size());
    CHECK(j["frames"] == 2);
    CHECK(j["clean_end"] == true);
    CHECK(j["truncated_at"].is_null());
    CHECK(j["header"]["pid"] == 4242);
    CHECK(j["header"]["cmdline"] == json::array({"/usr/bin/demo", "--flag", "x y"}));
    CHECK(j["header"]["options"]["max_depth"] == "128");
    CHECK(j["duration_ns"] == 40);

    const json& counts = j["counts"];
    CHECK(counts["alloc"] == 5);
    CHECK(counts["free"] == 2);
    CHECK(counts["realloc"] == 1);
    CHECK(counts["mmap"] == 1);
    CHECK(counts["munmap"] == 1);
    CHECK(counts["stacks"] == 2);
    CHECK(counts["modules"] == 2);
    CHECK(counts["threads"] == 2);
    CHECK(counts["rss_samples"] == 1);
    CHECK(counts["recording_toggles"] == 1);
    CHECK(counts["alloc_by_function"]["malloc"] == 4);
    CHECK(counts["alloc_by_function"]["calloc"] == 1);
    CHECK(counts["alloc_by_function"]["realloc"] == 1);
    CHECK(counts["alloc_by_function"]["pvalloc"] == 0);

    CHECK(j["counters"] == json{{"events", 13}, {"frames", 2}});  // the last Counters record only
    CHECK(j["threads"][0] == json{{"tid", 10}, {"name", "leak_three"}, {"start_ns", kT0 + 5}, {"exit_ns", nullptr}});
    CHECK(j["threads"][1]["exit_ns"] == kT0 + 36);
    CHECK(j["modules"][0]["build_id"] == "ab01");
    CHECK(j["modules"][1]["unload_gen"] == 3);
    CHECK(j["modules"][0]["unload_gen"].is_null());
    CHECK(j["recording"] == json::array({json{{"time_ns", kT0 + 35}, {"on", false}, {"source", "signal"}}}));

    CHECK(j["heap"]["live_bytes"] == 3 * 4242 + 100);
    CHECK(j["heap"]["live_count"] == 4);
    CHECK(j["heap"]["peak_bytes"] == 3 * 4242 + 100);
    CHECK(j["heap"]["peak_time_ns"] == kT0 + 33);
    CHECK(j["heap"]["unmatched_frees"] == 1);
    CHECK(j["mmap"] == json{{"live_bytes", 4096}, {"live_count", 1}});
    CHECK(j["rss"] == json{{"samples", 1}, {"max_bytes", 1 << 20}});
  }

  TEST_CASE("groups live blocks by stack, largest first, and resolves frames to modules") {
    const json j = info_of(leaky_dump(true).bytes());
    const json& leaks = j["leaks"];
    REQUIRE(leaks.size() == 2);
    CHECK(leaks[0]["stack"] == 1);
    CHECK(leaks[0]["count"] == 3);
    CHECK(leaks[0]["bytes"] == 3 * 4242);
    CHECK(leaks[0]["truncated"] == false);
    CHECK(leaks[0]["frames"][0] == json{{"ip", kExeBias + 0x1200}, {"module", "/tmp/leak_three"}, {"offset", 0x1200}});
    CHECK(leaks[1]["stack"] == 2);
    CHECK(leaks[1]["truncated"] == true);
    // Stack 2 was recorded at generation 1; its library arrived at generation 2.
    CHECK(leaks[1]["frames"][0]["module"] == "/usr/lib/libfoo.so");
    CHECK(leaks[1]["frames"][0]["offset"] == 0x50);
    CHECK(leaks[1]["frames"][1] == json{{"ip", 0x1234}, {"module", nullptr}, {"offset", nullptr}});
  }

  TEST_CASE("a dump cut inside its last frame reports where and what came before") {
    const DumpBuilder b = leaky_dump(true);
    auto bytes = b.bytes();
    bytes.resize(b.frame_ends()[1] - 3);
    const json j = info_of(bytes);
    CHECK(j["frames"] == 1);
    CHECK(j["clean_end"] == false);
    CHECK(j["truncated_at"] == b.frame_offsets()[1]);
    CHECK(j["counters"] == json{{"events", 9}, {"unknown_77", 1}});
    CHECK(j["heap"]["live_bytes"] == 3 * 4242);
  }

  TEST_CASE("a last frame never fully written (zeros) ends the dump like a cut") {
    const DumpBuilder b = leaky_dump(true);
    auto bytes = b.bytes();
    std::fill(bytes.end() - 6, bytes.end(), std::byte{0});
    const json j = info_of(bytes);
    CHECK(j["frames"] == 1);
    CHECK(j["clean_end"] == false);
    CHECK(j["truncated_at"] == b.frame_offsets()[1]);
  }

  TEST_CASE("a corrupt frame fails the load, naming the file and the frame's offset") {
    const DumpBuilder b = leaky_dump(true);
    auto bytes = b.bytes();
    bytes[b.frame_ends()[0] - 2] ^= std::byte{0xff};  // inside frame 0's checksum
    auto dump = reader::open_dump(reader::MappedFile::from_bytes(bytes, "bad.dat"));
    REQUIRE(dump.ok());
    const auto report = build_info_report(std::move(*dump), LoadOptions{2});
    REQUIRE_FALSE(report.ok());
    CHECK(report.error().code == ErrorCode::kCorrupt);
    CHECK(report.error().message.find("bad.dat: corrupt frame at offset " + std::to_string(b.frame_offsets()[0])) == 0);
  }

  TEST_CASE("run_info prints one object for one file and an array for several") {
    const std::string path = memrec::testing::write_temp_file(leaky_dump(false).bytes(), "info.dat");
    std::ostringstream out, err;
    CHECK(run_info(InfoOptions{{path}, true}, out, err) == kExitOk);
    const json one = json::parse(out.str());
    CHECK(one.is_object());
    CHECK(one["clean_end"] == false);
    CHECK(one["truncated_at"].is_null());

    std::ostringstream out2, err2;
    CHECK(run_info(InfoOptions{{path, path}, true}, out2, err2) == kExitOk);
    const json two = json::parse(out2.str());
    REQUIRE(two.is_array());
    CHECK(two.size() == 2);

    std::ostringstream text, err3;
    CHECK(run_info(InfoOptions{{path}, false}, text, err3) == kExitOk);
    CHECK(text.str().find("leak_three") != std::string::npos);
    std::filesystem::remove(path);
  }

  TEST_CASE("run_info names a missing or foreign file on stderr and exits 2") {
    const std::string foreign = memrec::testing::write_temp_file(memrec::testing::to_bytes("hello\n"), "foreign");
    std::ostringstream out, err;
    CHECK(run_info(InfoOptions{{"/nonexistent/x.dat", foreign}, true}, out, err) == kExitBadInput);
    CHECK(err.str() == "memrec: /nonexistent/x.dat: no such file; check the path\nmemrec: " + foreign +
                           ": not a memrec dump (bad magic)\n");
    CHECK(out.str().empty());
    std::filesystem::remove(foreign);
  }

  TEST_CASE("the recorder's threads come from their counters, each with its CPU time and events") {
    // given a dump whose last counters name recorder threads 0 and 2
    DumpBuilder b;
    b.frame([&](format::RecordEncoder& e) {
      e.thread(10);
      e.alloc(AllocFn::kMalloc, kT0 + 1, 0x1000, 16, 0);
      const format::CounterValue c[] = {
          {format::Counter::kEvents, 1},
          {static_cast<format::Counter>(format::recorder_cpu_key(0)), 2'500'000},
          {static_cast<format::Counter>(format::recorder_events_key(0)), 1000},
          {static_cast<format::Counter>(format::recorder_events_key(2)), 7},
      };
      e.counters(c);
      e.end(kT0 + 2);
    });
    // then info lists them by index, a missing key as 0
    const json j = info_of(b.bytes());
    CHECK(j["recorder_threads"] == json::parse(R"([{"thread": 0, "cpu_ns": 2500000, "events": 1000},
                                                   {"thread": 2, "cpu_ns": 0, "events": 7}])"));
    CHECK(j["counters"]["recorder_thread_0_cpu_ns"] == 2'500'000);
    CHECK(j["counters"]["recorder_thread_2_events"] == 7);
    // and the text summary gives each one's CPU per event
    const std::string path = memrec::testing::write_temp_file(b.bytes(), "recorder.dat");
    std::ostringstream text, err;
    CHECK(run_info(InfoOptions{{path}, false}, text, err) == kExitOk);
    CHECK(text.str().find("  recorder  thread 0: 0.003 s CPU, 1000 events, 2500 ns/event\n") != std::string::npos);
    CHECK(text.str().find("  recorder  thread 2: 0.000 s CPU, 7 events, 0 ns/event\n") != std::string::npos);
    std::filesystem::remove(path);
  }

  TEST_CASE("a dump without recorder threads' counters lists none") {
    CHECK(info_of(leaky_dump(true).bytes())["recorder_threads"] == json::array());
  }

  TEST_CASE("counter keys have names, unknown ones keep their number") {
    CHECK(counter_name(1) == "events");
    CHECK(counter_name(7) == "backpressure_wait_ns");
    CHECK(counter_name(14) == "threads");
    CHECK(counter_name(0) == "unknown_0");
    CHECK(counter_name(15) == "unwind_failed");
    CHECK(counter_name(16) == "foreign_malloc");
    CHECK(counter_name(18) == "toggle_chained");
    CHECK(counter_name(19) == "markers_lost");
    CHECK(counter_name(20) == "writer");
    CHECK(counter_name(21) == "stamp_tsc");
    CHECK(counter_name(22) == "tsc_read_ns");
    CHECK(counter_name(23) == "unknown_23");
    CHECK(counter_name(128) == "recorder_thread_0_cpu_ns");
    CHECK(counter_name(131) == "recorder_thread_1_events");
    CHECK(counter_name(255) == "recorder_thread_63_events");
    CHECK(counter_name(127) == "unknown_127");
  }
}
