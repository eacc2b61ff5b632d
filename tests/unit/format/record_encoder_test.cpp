// Every record kind through RecordEncoder -> zstd frame -> reader, with the
// extreme values the delta encoding must survive.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "memrec/format/record_encoder.h"
#include "memrec/reader/dump_reader.h"
#include "support/dump_builder.h"

using namespace memrec;
using namespace memrec::reader;
using format::AllocFn;
using memrec::testing::DumpBuilder;

namespace {

constexpr std::uint64_t kMax = ~0ull;

DumpContents read_back(const DumpBuilder& b) {
  auto dump = open_dump(MappedFile::from_bytes(b.bytes(), "rt.dat"));
  REQUIRE(dump.ok());
  auto all = read_all(*dump);
  REQUIRE(all.ok());
  return std::move(*all);
}

template <typename T>
const T& at(const DumpContents& c, std::size_t i) {
  REQUIRE(i < c.records.size());
  REQUIRE(std::holds_alternative<T>(c.records[i]));
  return std::get<T>(c.records[i]);
}

}  // namespace

TEST_SUITE("format/record_encoder") {
  TEST_CASE("round-trips every record kind with extreme values") {
    const std::array<std::uint64_t, 4> ips{kMax, 0, 0x7fff12345678, 1};
    const std::array<std::byte, 3> build_id{std::byte{0xde}, std::byte{0xad}, std::byte{0x00}};
    const std::array<format::Segment, 2> segs{format::Segment{0, 0x1000, 0, format::kSegmentRead},
                                              format::Segment{kMax, kMax, kMax, 0xff}};
    const std::array<format::CounterValue, 3> counters{format::CounterValue{format::Counter::kEvents, kMax},
                                                       format::CounterValue{format::Counter::kThreads, 0},
                                                       format::CounterValue{static_cast<format::Counter>(200), 5}};
    DumpBuilder b;
    b.frame([&](format::RecordEncoder& e) {
      REQUIRE(e.thread(kMax));
      REQUIRE(e.alloc(AllocFn::kPvalloc, kMax, kMax, kMax, UINT32_MAX));
      REQUIRE(e.alloc(AllocFn::kMalloc, 0, 0, 0, 0));  // every delta negative and maximal
      REQUIRE(e.free(5, 0x10));
      REQUIRE(e.realloc(AllocFn::kReallocArray, 3, kMax, 2, 7, 1u << 30, 9));  // alloc before free: wraps
      REQUIRE(e.mmap(kMax - 1, 0x7f0000000000, 1ull << 40, 3, 0x22, 1));
      REQUIRE(e.munmap(0, kMax, kMax));
      REQUIRE(e.mremap(10, 0x1000, 4096, 20, 0x2000, 8192, 0));
      REQUIRE(e.stack(UINT32_MAX, kMax, format::kStackTruncated, ips));
      REQUIRE(e.stack(1, 0, 0, {}));
      REQUIRE(e.module_load(1, 1, "/lib/x86_64-linux-gnu/libc.so.6", kMax, build_id, segs));
      REQUIRE(e.module_unload(UINT32_MAX, kMax));
      REQUIRE(e.thread_start(0, kMax, "worker-1"));
      REQUIRE(e.thread_name(7, std::string_view("\xff\x00n", 3)));
      REQUIRE(e.thread_exit(7, 0));
      REQUIRE(e.rss(kMax, kMax));
      REQUIRE(e.recording(1, false));
      REQUIRE(e.recording(1, true));
      REQUIRE(e.counters(counters));
      REQUIRE(e.end(kMax));
    });
    const DumpContents c = read_back(b);
    REQUIRE(c.records.size() == 20);

    CHECK(at<ThreadRecord>(c, 0).tid == kMax);
    const auto& a0 = at<AllocRecord>(c, 1);
    CHECK(a0.tid == kMax);
    CHECK(a0.fn == AllocFn::kPvalloc);
    CHECK(a0.time_ns == kMax);
    CHECK(a0.addr == kMax);
    CHECK(a0.size == kMax);
    CHECK(a0.stack.value == UINT32_MAX);
    const auto& a1 = at<AllocRecord>(c, 2);
    CHECK(a1.fn == AllocFn::kMalloc);
    CHECK(a1.time_ns == 0);
    CHECK(a1.addr == 0);
    CHECK(a1.stack.value == 0);
    const auto& f = at<FreeRecord>(c, 3);
    CHECK(f.time_ns == 5);
    CHECK(f.addr == 0x10);
    const auto& r = at<ReallocRecord>(c, 4);
    CHECK(r.fn == AllocFn::kReallocArray);
    CHECK(r.free_ns == 3);
    CHECK(r.old_addr == kMax);
    CHECK(r.alloc_ns == 2);
    CHECK(r.new_addr == 7);
    CHECK(r.size == 1u << 30);
    CHECK(r.stack.value == 9);
    const auto& m = at<MmapRecord>(c, 5);
    CHECK(m.time_ns == kMax - 1);  // after the realloc's time went to 2
    CHECK(m.addr == 0x7f0000000000);
    CHECK(m.size == 1ull << 40);
    CHECK(m.prot == 3);
    CHECK(m.flags == 0x22);
    CHECK(m.stack.value == 1);
    const auto& u = at<MunmapRecord>(c, 6);
    CHECK(u.time_ns == 0);
    CHECK(u.addr == kMax);
    CHECK(u.size == kMax);
    const auto& mr = at<MremapRecord>(c, 7);
    CHECK(mr.free_ns == 10);
    CHECK(mr.old_addr == 0x1000);
    CHECK(mr.old_size == 4096);
    CHECK(mr.alloc_ns == 20);
    CHECK(mr.new_addr == 0x2000);
    CHECK(mr.new_size == 8192);
    CHECK(mr.stack.value == 0);
    const auto& s = at<StackRecord>(c, 8);
    CHECK(s.id.value == UINT32_MAX);
    CHECK(s.module_gen == kMax);
    CHECK(s.truncated());
    CHECK(s.ips == std::vector<std::uint64_t>(ips.begin(), ips.end()));
    CHECK(at<StackRecord>(c, 9).ips.empty());
    const auto& ml = at<ModuleLoadRecord>(c, 10);
    CHECK(ml.id.value == 1);
    CHECK(ml.gen == 1);
    CHECK(ml.path == "/lib/x86_64-linux-gnu/libc.so.6");
    CHECK(ml.bias == kMax);
    CHECK(ml.build_id == std::vector<std::byte>(build_id.begin(), build_id.end()));
    REQUIRE(ml.segments.size() == 2);
    CHECK(ml.segments[0].memsz == 0x1000);
    CHECK(ml.segments[0].flags == format::kSegmentRead);
    CHECK(ml.segments[1].vaddr == kMax);
    CHECK(ml.segments[1].file_offset == kMax);
    CHECK(ml.segments[1].flags == 0xff);
    CHECK(at<ModuleUnloadRecord>(c, 11).id.value == UINT32_MAX);
    CHECK(at<ModuleUnloadRecord>(c, 11).gen == kMax);
    const auto& ts = at<ThreadStartRecord>(c, 12);
    CHECK(ts.tid == 0);
    CHECK(ts.time_ns == kMax);
    CHECK(ts.name == "worker-1");
    CHECK(at<ThreadNameRecord>(c, 13).name == std::string("\xff\x00n", 3));
    CHECK(at<ThreadExitRecord>(c, 14).time_ns == 0);
    CHECK(at<RssRecord>(c, 15).rss_bytes == kMax);
    CHECK(at<RssRecord>(c, 15).time_ns == kMax);
    CHECK_FALSE(at<RecordingRecord>(c, 16).on);
    CHECK(at<RecordingRecord>(c, 17).on);
    const auto& cv = at<CountersRecord>(c, 18);
    REQUIRE(cv.values.size() == 3);
    CHECK(cv.values[0] == std::pair<std::uint64_t, std::uint64_t>{1, kMax});
    CHECK(cv.values[2] == std::pair<std::uint64_t, std::uint64_t>{200, 5});
    CHECK(at<EndRecord>(c, 19).time_ns == kMax);

    CHECK(c.facts.clean_end);
    CHECK(c.facts.counters.at(1) == kMax);
    CHECK(c.facts.counters.at(200) == 5);
  }

  TEST_CASE("an Exec record round-trips, and the last one says whether the dump ended by exec") {
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) {
      REQUIRE(e.exec(kMax, 0, "/no/such/true"));
      REQUIRE(e.exec(5, 2, "/no/such/true"));  // ENOENT: the recording went on
    });
    b.frame([](format::RecordEncoder& e) { REQUIRE(e.exec(7, 0, "/usr/bin/true")); });
    const DumpContents c = read_back(b);
    REQUIRE(c.records.size() == 3);
    const auto& announced = at<ExecRecord>(c, 0);
    CHECK(announced.time_ns == kMax);
    CHECK(announced.error == 0);
    CHECK(announced.path == "/no/such/true");
    CHECK(at<ExecRecord>(c, 1).time_ns == 5);
    CHECK(at<ExecRecord>(c, 1).error == 2);
    CHECK(at<ExecRecord>(c, 2).path == "/usr/bin/true");
    CHECK_FALSE(c.facts.clean_end);
    CHECK(c.facts.ended_by_exec());
    CHECK(c.facts.ended());
    CHECK(c.facts.exec_path == "/usr/bin/true");
  }

  TEST_CASE("markers and the source of every start and stop round-trip") {
    const std::string longest(format::kMaxMarkerLabelBytes, 'x');
    DumpBuilder b;
    b.frame([&](format::RecordEncoder& e) {
      REQUIRE(e.recording(10, false, format::Source::kStart));
      REQUIRE(e.marker(20, format::Source::kApi, "warmup-done"));
      REQUIRE(e.recording(30, true, format::Source::kCtl));
      REQUIRE(e.marker(kMax, format::Source::kCtl, longest));
      REQUIRE(e.marker(0, format::Source::kApi, ""));
      REQUIRE(e.recording(40, false, format::Source::kApi));
      REQUIRE(e.recording(50, true, format::Source::kSignal));
    });
    const DumpContents c = read_back(b);
    REQUIRE(c.records.size() == 7);
    CHECK_FALSE(at<RecordingRecord>(c, 0).on);
    CHECK(at<RecordingRecord>(c, 0).source == format::Source::kStart);
    CHECK(at<MarkerRecord>(c, 1).time_ns == 20);
    CHECK(at<MarkerRecord>(c, 1).source == format::Source::kApi);
    CHECK(at<MarkerRecord>(c, 1).label == "warmup-done");
    CHECK(at<RecordingRecord>(c, 2).on);
    CHECK(at<RecordingRecord>(c, 2).source == format::Source::kCtl);
    CHECK(at<MarkerRecord>(c, 3).time_ns == kMax);
    CHECK(at<MarkerRecord>(c, 3).label == longest);
    CHECK(at<MarkerRecord>(c, 4).time_ns == 0);
    CHECK(at<MarkerRecord>(c, 4).label.empty());
    CHECK(at<RecordingRecord>(c, 5).source == format::Source::kApi);
    CHECK(at<RecordingRecord>(c, 6).on);
    CHECK(at<RecordingRecord>(c, 6).source == format::Source::kSignal);
  }

  TEST_CASE("a version 6 dump still reads: its pauses and resumes came from the signal") {
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) {
      REQUIRE(e.recording(1, false));  // the byte version 6 wrote: 0 or 1
      REQUIRE(e.recording(2, true));
    });
    auto bytes = b.bytes();
    bytes[8] = std::byte{6};
    auto dump = open_dump(MappedFile::from_bytes(bytes, "v6.dat"));
    REQUIRE(dump.ok());
    CHECK(dump->header.version == 6);
    auto all = read_all(*dump);
    REQUIRE(all.ok());
    const DumpContents& c = *all;
    REQUIRE(c.records.size() == 2);
    CHECK_FALSE(at<RecordingRecord>(c, 0).on);
    CHECK(at<RecordingRecord>(c, 0).source == format::Source::kSignal);
    CHECK(at<RecordingRecord>(c, 1).on);
  }

  TEST_CASE("a Recording or Marker record naming an unknown source is corrupt") {
    for (const std::uint8_t tag : {std::uint8_t{0x0f}, std::uint8_t{0x13}}) {
      CAPTURE(tag);
      DumpBuilder b(memrec::testing::sample_header(), memrec::testing::FrameLayout::kRecords);
      b.frame([&](format::RecordEncoder& e) {
        if (tag == 0x0f) {
          REQUIRE(e.recording(1, true, static_cast<format::Source>(format::kSourceCount)));
        } else {
          REQUIRE(e.marker(1, static_cast<format::Source>(format::kSourceCount), "x"));
        }
      });
      auto dump = open_dump(MappedFile::from_bytes(b.bytes(), "bad.dat"));
      REQUIRE(dump.ok());
      const auto all = read_all(*dump);
      REQUIRE_FALSE(all.ok());
      CHECK(all.error().message.find("names an unknown source") != std::string::npos);
    }
  }

  TEST_CASE("a dump whose last exec failed did not end by exec: End, or nothing, follows") {
    for (const bool end : {false, true}) {
      CAPTURE(end);
      DumpBuilder b;
      b.frame([&](format::RecordEncoder& e) {
        REQUIRE(e.exec(1, 0, "/no/such/program"));
        REQUIRE(e.exec(2, 2, "/no/such/program"));
        if (end) REQUIRE(e.end(3));
      });
      const DumpContents c = read_back(b);
      CHECK_FALSE(c.facts.ended_by_exec());
      CHECK_FALSE(c.facts.exec_path.has_value());
      CHECK(c.facts.ended() == end);
    }
  }

  TEST_CASE("decodes every allocation function from its tag") {
    DumpBuilder b;
    b.frame([](format::RecordEncoder& e) {
      e.thread(1);
      for (std::uint8_t fn = 0; fn < format::kAllocFnCount; ++fn) {
        REQUIRE(e.alloc(static_cast<AllocFn>(fn), fn, 0x1000 + fn, fn, fn));
      }
    });
    const DumpContents c = read_back(b);
    REQUIRE(c.records.size() == 1 + format::kAllocFnCount);
    for (std::uint8_t fn = 0; fn < format::kAllocFnCount; ++fn) {
      CHECK(at<AllocRecord>(c, 1 + fn).fn == static_cast<AllocFn>(fn));
    }
  }

  TEST_CASE("starts every frame with a fresh delta state") {
    DumpBuilder b;
    for (int i = 0; i < 3; ++i) {
      b.frame([](format::RecordEncoder& e) {
        e.thread(9);
        e.alloc(AllocFn::kMalloc, 1000, 0x5000, 16, 3);
      });
    }
    const DumpContents c = read_back(b);
    REQUIRE(c.frames.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
      const auto& a = at<AllocRecord>(c, 2 * i + 1);
      CHECK(a.time_ns == 1000);
      CHECK(a.addr == 0x5000);
      CHECK(a.stack.value == 3);
    }
  }

  TEST_CASE("a stack that shares outer frames with the frame's stack before it stores only its own, and reads whole") {
    const std::vector<std::uint64_t> first{0x401010, 0x402020, 0x7f00'0000'1000, 0x7f00'0000'2000};
    const std::vector<std::uint64_t> second{0x405050, 0x402020, 0x7f00'0000'1000, 0x7f00'0000'2000};  // shares 3
    const std::vector<std::uint64_t> third{0x406060, 0x7f00'0000'9000, 0x7f00'0000'2000};             // shares 1
    std::vector<std::byte> plain_buf(256);
    std::vector<std::byte> shared_buf(256);
    format::RecordEncoder plain(plain_buf);
    format::RecordEncoder shared(shared_buf);
    REQUIRE(plain.stack(2, 1, 0, second));
    REQUIRE(shared.stack(2, 1, 0, second, first));
    // tag, id, gen, flags, depth, then 4 deltas; shared: the count 3 and 1 delta.
    CHECK(static_cast<std::uint8_t>(shared.written()[3]) == format::kStackShared);
    CHECK(static_cast<std::uint8_t>(shared.written()[5]) == 3);
    // Nothing before it, or no frame in common: stored whole.
    std::vector<std::byte> alone_buf(256);
    format::RecordEncoder alone(alone_buf);
    REQUIRE(alone.stack(2, 1, 0, second, std::vector<std::uint64_t>{0x1234}));
    CHECK(static_cast<std::uint8_t>(alone.written()[3]) == 0);
    CHECK(alone.size() == plain.size());
    // Gone: the deltas to 0x402020 (3 bytes), 0x7f0000001000 (7) and
    // 0x7f0000002000 (2); added: the count.
    CHECK(plain.size() == shared.size() + 3 + 7 + 2 - 1);

    DumpBuilder b;
    for (int frame = 0; frame < 2; ++frame) {
      b.frame([&](format::RecordEncoder& e) {
        // A frame's first stack has none before it, as the writer starts
        // every frame afresh.
        REQUIRE(e.stack(1, 1, format::kStackTruncated, first));
        REQUIRE(e.stack(2, 1, format::kStackTruncated, second, first));
        REQUIRE(e.stack(3, 1, 0, third, second));
      });
    }
    const DumpContents c = read_back(b);
    REQUIRE(c.records.size() == 6);
    for (std::size_t frame = 0; frame < 2; ++frame) {
      CAPTURE(frame);
      CHECK(at<StackRecord>(c, 3 * frame).ips == first);
      CHECK(at<StackRecord>(c, 3 * frame + 1).ips == second);
      CHECK(at<StackRecord>(c, 3 * frame + 2).ips == third);
      // Readers see the stored form's bit cleared, the others kept.
      CHECK(at<StackRecord>(c, 3 * frame + 1).flags == format::kStackTruncated);
      CHECK(at<StackRecord>(c, 3 * frame + 2).flags == 0);
    }
  }

  TEST_CASE("writes a whole record or nothing when the buffer is full") {
    std::array<std::byte, 12> buf{};
    format::RecordEncoder e(buf);
    REQUIRE(e.thread(1));
    REQUIRE(e.alloc(AllocFn::kMalloc, 1, 1, 1, 1));
    const std::size_t before = e.size();
    CHECK_FALSE(e.alloc(AllocFn::kMalloc, kMax, kMax, kMax, UINT32_MAX));
    CHECK(e.size() == before);
    // The failed record did not advance the delta state: the next one still decodes.
    REQUIRE(e.free(2, 1));
    std::vector<std::byte> payload(e.written().begin(), e.written().end());
    std::vector<Record> got;
    struct Sink : RecordVisitor {
      std::vector<Record>* out;
      void on_free(const FreeRecord& r) override { out->emplace_back(r); }
    } sink;
    sink.out = &got;
    REQUIRE(decode_records(payload, "buf", 0, sink).ok());
    REQUIRE(got.size() == 1);
    CHECK(std::get<FreeRecord>(got[0]).time_ns == 2);
    CHECK(std::get<FreeRecord>(got[0]).addr == 1);
  }

  TEST_CASE("writes the same bytes with room to spare as when every byte is checked") {
    // A roomy buffer takes the unchecked fast path of Alloc and Free; a buffer
    // cut to the records' exact size takes the checked one.
    const auto encode = [](std::span<std::byte> buf) {
      format::RecordEncoder e(buf);
      const std::uint64_t values[] = {0, 1, 127, 128, 16383, 16384, 1ull << 35, kMax - 1, kMax};
      for (const std::uint64_t v : values) {
        if (!e.alloc(AllocFn::kCalloc, v, kMax - v, v, static_cast<std::uint32_t>(v))) return std::vector<std::byte>{};
        if (!e.free(v / 2, v)) return std::vector<std::byte>{};
      }
      return std::vector<std::byte>(e.written().begin(), e.written().end());
    };
    std::vector<std::byte> roomy(4096);
    const std::vector<std::byte> fast = encode(roomy);
    REQUIRE_FALSE(fast.empty());
    std::vector<std::byte> exact(fast.size());
    CHECK(encode(exact) == fast);
  }
}
