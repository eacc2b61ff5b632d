// Columns (memrec/format/frame_columns.h and the reader's join and direct
// decode), with version 4's carved allocation misses, version 3's age-coded
// addresses and version 2's rings: random
// record streams split and join back to the same bytes, every layout reads
// the same records, and broken column payloads are corrupt, never a crash.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "memrec/format/column_encoder.h"
#include "memrec/format/frame_columns.h"
#include "memrec/format/record_encoder.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/frame_columns_join.h"
#include "memrec/reader/frame_decoder.h"
#include "support/dump_builder.h"

using namespace memrec;
using format::AllocFn;
using memrec::testing::ColumnCoding;
using memrec::testing::columns_payload;
using memrec::testing::DumpBuilder;
using memrec::testing::FrameLayout;

namespace {

// Every record kind, with addresses the coding finds (a free of a live block,
// a malloc of a freed one, of its old size or another), miss aligned and
// unaligned, and deltas as large as 64 bits allow.
template <typename Encoder>
void random_records(Encoder& e, std::uint32_t seed, int n) {
  std::mt19937_64 rng(seed);
  struct Block {
    std::uint64_t addr;
    std::uint64_t size;
  };
  std::vector<Block> live;
  std::vector<Block> freed;
  std::uint64_t t = 0;
  const std::uint64_t addresses[] = {0, ~0ull, ~0ull - 15, 0x8000'0000'0000'0000ull, 1, 16, 0x10};
  auto fresh = [&]() -> std::uint64_t {
    switch (rng() % 4) {
      case 0:
        return addresses[rng() % std::size(addresses)];
      case 1:
        return 0x5555'0000'0000ull + (rng() % 100000) * 16;  // aligned, near each other
      case 2:
        return rng();  // anywhere, usually unaligned
      default:
        return 0x7f00'0000'0000ull + (rng() % 4096) * 8;  // 8-aligned
    }
  };
  REQUIRE(e.thread(1));
  std::vector<std::uint64_t> last_stack;
  for (int i = 0; i < n; ++i) {
    t += rng() % 3 == 0 ? 0 : rng() % 5000;
    const auto stack = static_cast<std::uint32_t>(rng() % 40);
    switch (rng() % 12) {
      case 0:
      case 1:
      case 2: {
        Block b{fresh(), rng() % 5000};
        if (!freed.empty() && rng() % 2) {
          // Most often the last block freed, as allocators hand them back.
          const Block& f = rng() % 2 ? freed.back() : freed[rng() % freed.size()];
          b = {f.addr, rng() % 3 ? f.size : b.size};
        }
        REQUIRE(e.alloc(static_cast<AllocFn>(rng() % format::kAllocFnCount), t, b.addr, b.size, stack));
        live.push_back(b);
        break;
      }
      case 3:
      case 4:
      case 5: {
        const Block b = !live.empty() && rng() % 4 ? live[rng() % live.size()] : Block{fresh(), 0};
        REQUIRE(e.free(t, b.addr));
        freed.push_back(b);
        break;
      }
      case 6: {
        const std::uint64_t old = !live.empty() ? live[rng() % live.size()].addr : fresh();
        REQUIRE(e.realloc(AllocFn::kMalloc, t, old, t + rng() % 10, fresh(), rng() % 100000, stack));
        break;
      }
      case 7:
        REQUIRE(e.mmap(t, fresh(), rng(), 3, 0x22, stack));
        break;
      case 8:
        REQUIRE(e.munmap(t, fresh(), rng() % 100000));
        break;
      case 9:
        REQUIRE(e.mremap(t, fresh(), 4096, t + 1, fresh(), 8192, stack));
        break;
      case 10: {
        // Up to three frames of its own, and often the outer part of the
        // stack before it (stored shared, kStackShared).
        std::vector<std::uint64_t> ips = {rng(), rng() % 100, 0x4000};
        ips.resize(rng() % 4);
        if (rng() % 2 == 0)
          ips.insert(ips.end(), last_stack.begin() + rng() % (last_stack.size() + 1), last_stack.end());
        REQUIRE(e.stack(static_cast<std::uint32_t>(i + 1), rng() % 3, 0, ips, last_stack));
        last_stack = ips;
        REQUIRE(e.thread(rng() % 4 + 1));
        break;
      }
      default: {
        const std::byte build_id[] = {std::byte{1}, std::byte{2}};
        const format::Segment segs[] = {{0, 0x1000, 0, format::kSegmentRead}};
        REQUIRE(e.module_load(static_cast<std::uint32_t>(i), 1, "/lib/x.so", rng(), build_id, segs));
        REQUIRE(e.rss(t, rng() % 1000000));
        REQUIRE(e.recording(t, rng() % 2 == 0));
        REQUIRE(e.thread_start(rng() % 9, t, "worker"));
        REQUIRE(e.thread_name(rng() % 9, std::string(rng() % 300, 'n')));
        REQUIRE(e.thread_exit(rng() % 9, t));
        REQUIRE(e.module_unload(static_cast<std::uint32_t>(i), 2));
        REQUIRE(e.exec(t, static_cast<std::uint32_t>(rng() % 3), std::string(rng() % 300, 'p')));
        break;
      }
    }
  }
  const format::CounterValue counters[] = {{format::Counter::kEvents, 7}};
  REQUIRE(e.counters(counters));
  REQUIRE(e.end(t));
}

// A ColumnEncoder behind RecordEncoder's methods, as the writer uses it:
// Alloc and Free straight into the columns, the others through record().
class ColumnEncoderAsRecords {
 public:
  explicit ColumnEncoderAsRecords(format::ColumnEncoder& e) : e_(e) {}
  bool alloc(AllocFn fn, std::uint64_t t, std::uint64_t a, std::uint64_t size, std::uint32_t stack) {
    return e_.alloc(fn, t, a, size, stack);
  }
  bool free(std::uint64_t t, std::uint64_t a) { return e_.free(t, a); }
  template <typename... Args>
  bool thread(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.thread(a...); });
  }
  template <typename... Args>
  bool realloc(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.realloc(a...); });
  }
  template <typename... Args>
  bool mmap(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.mmap(a...); });
  }
  template <typename... Args>
  bool munmap(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.munmap(a...); });
  }
  template <typename... Args>
  bool mremap(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.mremap(a...); });
  }
  // The encoder keeps the frame's previous stack itself, as the writer relies
  // on: the bytes must equal RecordEncoder's given the previous stack.
  bool stack(std::uint32_t id, std::uint64_t gen, std::uint8_t flags, std::span<const std::uint64_t> ips,
             std::span<const std::uint64_t> /*previous*/) {
    return e_.stack(id, gen, flags, ips);
  }
  template <typename... Args>
  bool module_load(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.module_load(a...); });
  }
  template <typename... Args>
  bool module_unload(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.module_unload(a...); });
  }
  template <typename... Args>
  bool rss(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.rss(a...); });
  }
  template <typename... Args>
  bool recording(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.recording(a...); });
  }
  template <typename... Args>
  bool thread_start(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.thread_start(a...); });
  }
  bool thread_name(std::uint64_t tid, const std::string& name) {
    return other([&](format::RecordEncoder& r) { return r.thread_name(tid, name); });
  }
  template <typename... Args>
  bool thread_exit(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.thread_exit(a...); });
  }
  template <typename... Args>
  bool counters(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.counters(a...); });
  }
  template <typename... Args>
  bool end(Args&&... a) {
    return other([&](format::RecordEncoder& r) { return r.end(a...); });
  }
  bool exec(std::uint64_t time_ns, std::uint32_t error, const std::string& path) {
    return other([&](format::RecordEncoder& r) { return r.exec(time_ns, error, path); });
  }

 private:
  template <typename Fn>
  bool other(Fn&& fn) {
    return e_.record(fn);
  }
  format::ColumnEncoder& e_;
};

// Column buffers of `capacity` bytes each, owned by the caller's vector.
format::ColumnBuffers column_buffers(std::vector<std::byte>& storage, std::size_t capacity) {
  storage.assign(format::kColumnCount * capacity, std::byte{0});
  format::ColumnBuffers cols;
  for (std::size_t i = 0; i < format::kColumnCount; ++i) cols[i] = std::span(storage).subspan(i * capacity, capacity);
  return cols;
}

std::vector<std::byte> records_of(std::uint32_t seed, int n) {
  std::vector<std::byte> buf(4u << 20);
  format::RecordEncoder e(buf);
  random_records(e, seed, n);
  return {e.written().begin(), e.written().end()};
}

std::uint8_t layout_of(std::span<const std::byte> payload) {
  REQUIRE(!payload.empty());
  return static_cast<std::uint8_t>(payload[0]);
}

Status join(std::span<const std::byte> payload, std::vector<std::byte>& out) {
  return reader::join_columns(payload.subspan(1), layout_of(payload), out, "c.dat", 99);
}

// Every frame's records as the reader hands them to the record decoder, and
// how many records read_all finds.
std::pair<std::vector<std::byte>, std::size_t> read_records(const DumpBuilder& b) {
  auto dump = reader::open_dump(reader::MappedFile::from_bytes(b.bytes(), "c.dat"));
  REQUIRE(dump.ok());
  std::vector<std::byte> bytes;
  reader::FrameDecoder decoder;
  for (const reader::FrameInfo& frame : dump->index.frames) {
    const auto records = decoder.decompress(dump->bytes(), frame, dump->name());
    REQUIRE(records.ok());
    bytes.insert(bytes.end(), records->begin(), records->end());
  }
  auto all = reader::read_all(*dump);
  REQUIRE(all.ok());
  return {bytes, all->records.size()};
}

// Writes every record it visits back as version-1 bytes: what a reader made
// of a payload, comparable byte for byte with the records it came from.
class Reencoder final : public reader::RecordVisitor {
 public:
  Reencoder() : buf_(8u << 20), e_(buf_) {}
  std::vector<std::byte> bytes() const { return {e_.written().begin(), e_.written().end()}; }

  void on_thread(const reader::ThreadRecord& r) override { REQUIRE(e_.thread(r.tid)); }
  void on_alloc(const reader::AllocRecord& r) override {
    REQUIRE(e_.alloc(r.fn, r.time_ns, r.addr, r.size, r.stack.value));
  }
  void on_free(const reader::FreeRecord& r) override { REQUIRE(e_.free(r.time_ns, r.addr)); }
  void on_realloc(const reader::ReallocRecord& r) override {
    REQUIRE(e_.realloc(r.fn, r.free_ns, r.old_addr, r.alloc_ns, r.new_addr, r.size, r.stack.value));
  }
  void on_mmap(const reader::MmapRecord& r) override {
    REQUIRE(e_.mmap(r.time_ns, r.addr, r.size, static_cast<std::uint32_t>(r.prot), static_cast<std::uint32_t>(r.flags),
                    r.stack.value));
  }
  void on_munmap(const reader::MunmapRecord& r) override { REQUIRE(e_.munmap(r.time_ns, r.addr, r.size)); }
  void on_mremap(const reader::MremapRecord& r) override {
    REQUIRE(e_.mremap(r.free_ns, r.old_addr, r.old_size, r.alloc_ns, r.new_addr, r.new_size, r.stack.value));
  }
  // Passes the stack before, as the writer does: the bytes come out the same.
  void on_stack(const reader::StackRecord& r) override {
    REQUIRE(e_.stack(r.id.value, r.module_gen, r.flags, r.ips, last_stack_));
    last_stack_ = r.ips;
  }
  void on_module_load(const reader::ModuleLoadRecord& r) override {
    REQUIRE(e_.module_load(r.id.value, r.gen, r.path, r.bias, r.build_id, r.segments));
  }
  void on_module_unload(const reader::ModuleUnloadRecord& r) override { REQUIRE(e_.module_unload(r.id.value, r.gen)); }
  void on_thread_start(const reader::ThreadStartRecord& r) override {
    REQUIRE(e_.thread_start(r.tid, r.time_ns, r.name));
  }
  void on_thread_name(const reader::ThreadNameRecord& r) override { REQUIRE(e_.thread_name(r.tid, r.name)); }
  void on_thread_exit(const reader::ThreadExitRecord& r) override { REQUIRE(e_.thread_exit(r.tid, r.time_ns)); }
  void on_rss(const reader::RssRecord& r) override { REQUIRE(e_.rss(r.time_ns, r.rss_bytes)); }
  void on_recording(const reader::RecordingRecord& r) override { REQUIRE(e_.recording(r.time_ns, r.on, r.source)); }
  void on_counters(const reader::CountersRecord& r) override {
    std::vector<format::CounterValue> values;
    for (const auto& [key, value] : r.values) values.push_back({static_cast<format::Counter>(key), value});
    REQUIRE(e_.counters(values));
  }
  void on_end(const reader::EndRecord& r) override { REQUIRE(e_.end(r.time_ns)); }
  void on_exec(const reader::ExecRecord& r) override { REQUIRE(e_.exec(r.time_ns, r.error, r.path)); }
  void on_marker(const reader::MarkerRecord& r) override { REQUIRE(e_.marker(r.time_ns, r.source, r.label)); }

 private:
  std::vector<std::byte> buf_;
  format::RecordEncoder e_;
  std::vector<std::uint64_t> last_stack_;
};

// decode_columns() on a payload with its layout byte: the records it visited
// (re-encoded) and its status.
std::pair<std::vector<std::byte>, Status> decode_direct(std::span<const std::byte> payload) {
  Reencoder visited;
  Status status = reader::decode_columns(payload.subspan(1), layout_of(payload), "c.dat", 99, visited);
  return {visited.bytes(), std::move(status)};
}

// join_columns() then decode_records(), the other way to read the same payload.
std::pair<std::vector<std::byte>, Status> decode_joined(std::span<const std::byte> payload) {
  std::vector<std::byte> joined;
  Reencoder visited;
  Status status = join(payload, joined);
  if (status.ok()) status = reader::decode_records(joined, "c.dat", 99, visited);
  return {visited.bytes(), std::move(status)};
}

// Runs the test case once per coding, as subcases: the current version's
// split columns, version 4's carved misses, version 3's ages, version 2's
// rings.
ColumnCoding coding_subcase() {
  ColumnCoding coding = ColumnCoding::kSplit;
  SUBCASE("split") {}
  SUBCASE("carved") { coding = ColumnCoding::kCarved; }
  SUBCASE("ages") { coding = ColumnCoding::kAged; }
  SUBCASE("rings") { coding = ColumnCoding::kRings; }
  return coding;
}

std::uint8_t layout_for(ColumnCoding coding) {
  switch (coding) {
    case ColumnCoding::kSplit:
      return format::kLayoutSplitColumns;
    case ColumnCoding::kCarved:
      return format::kLayoutCarvedColumns;
    case ColumnCoding::kAged:
      return format::kLayoutAgedColumns;
    case ColumnCoding::kRings:
      return format::kLayoutColumns;
  }
  return 0;
}

// The byte lengths of a payload's columns, from its directory, as many as
// its layout has.
std::vector<std::uint64_t> column_sizes(std::span<const std::byte> payload) {
  std::vector<std::uint64_t> sizes;
  std::span<const std::byte> dir = payload.subspan(2);
  for (std::size_t i = 0; i < format::column_count(layout_of(payload)); ++i) {
    const auto v = format::get_varint(dir);
    REQUIRE(v);
    sizes.push_back(v->value);
    dir = dir.subspan(v->size);
  }
  return sizes;
}

std::uint64_t size_of(const std::vector<std::uint64_t>& sizes, format::Column c) {
  const auto i = static_cast<std::size_t>(c);
  return i < sizes.size() ? sizes[i] : 0;
}

// Where column `c` starts in `payload`.
std::size_t column_at(std::span<const std::byte> payload, format::Column c) {
  const auto sizes = column_sizes(payload);
  std::size_t at = 2;
  for (const std::uint64_t size : sizes) {
    std::array<std::byte, format::kMaxVarintBytes> tmp{};
    at += format::put_varint(size, tmp);
  }
  for (std::size_t i = 0; i < static_cast<std::size_t>(c); ++i) at += sizes[i];
  return at;
}

}  // namespace

TEST_SUITE("format/frame_columns") {
  TEST_CASE("decoding columns directly visits the records they were split from") {
    const ColumnCoding coding = coding_subcase();
    for (std::uint32_t seed = 1; seed <= 200; ++seed) {
      CAPTURE(seed);
      const auto records = records_of(seed, 1 + static_cast<int>(seed * 7 % 500));
      const auto [visited, status] = decode_direct(columns_payload(records, coding));
      REQUIRE(status.ok());
      CHECK(visited == records);
    }
  }

  TEST_CASE("damaged columns decode directly as they join, or stop earlier, never a crash") {
    const ColumnCoding coding = coding_subcase();
    const auto good = columns_payload(records_of(9, 400), coding);
    std::mt19937 rng(4);
    int failed = 0;
    int stricter = 0;
    for (int i = 0; i < 3000; ++i) {
      CAPTURE(i);
      auto bad = good;
      for (int flips = 0; flips < 1 + static_cast<int>(rng() % 4); ++flips) {
        bad[1 + rng() % (bad.size() - 1)] = std::byte{static_cast<std::uint8_t>(rng())};
      }
      const auto [direct, direct_status] = decode_direct(bad);
      const auto [joined, joined_status] = decode_joined(bad);
      if (direct_status.ok()) {
        CHECK(joined_status.ok());
        CHECK(direct == joined);
        continue;
      }
      ++failed;
      CHECK(direct_status.error().code == ErrorCode::kCorrupt);
      CHECK(direct_status.error().message.find("c.dat: corrupt frame at offset 99: ") == 0);
      if (joined_status.ok()) {
        // Joined, a record whole in `rest` whose length was damaged lends
        // bytes to the next one and may still parse; decoded directly, each
        // body must be exactly its length.
        ++stricter;
        CHECK(direct_status.error().message.find("(record 0x") != std::string::npos);
      }
      // Up to the damage both read the same records (the join checks every
      // column before the decoder visits anything, so it may visit none).
      const auto& shorter = direct.size() < joined.size() ? direct : joined;
      const auto& longer = direct.size() < joined.size() ? joined : direct;
      CHECK(std::equal(shorter.begin(), shorter.end(), longer.begin()));
    }
    CHECK(failed > 1000);  // the damage does break frames
    CHECK(stricter < 30);
  }

  TEST_CASE("random record streams split into columns and join back to the same bytes") {
    const ColumnCoding coding = coding_subcase();
    for (std::uint32_t seed = 1; seed <= 200; ++seed) {
      CAPTURE(seed);
      const auto records = records_of(seed, 1 + static_cast<int>(seed * 7 % 500));
      const auto payload = columns_payload(records, coding);
      CHECK(layout_of(payload) == layout_for(coding));
      std::vector<std::byte> joined;
      const Status status = join(payload, joined);
      REQUIRE(status.ok());
      CHECK(joined == records);
    }
  }

  TEST_CASE("an address found earlier in the frame costs a small code instead of the address") {
    // A block freed and allocated again at once, 10,000 times: every address
    // after the first is found, one byte in addr_k and nothing in addr.
    const ColumnCoding coding = coding_subcase();
    std::vector<std::byte> buf(1u << 20);
    format::RecordEncoder e(buf);
    REQUIRE(e.thread(1));
    for (int i = 0; i < 10000; ++i) {
      REQUIRE(e.alloc(AllocFn::kMalloc, i, 0x5555'1234'5670ull, 64, 1));
      REQUIRE(e.free(i, 0x5555'1234'5670ull));
    }
    const auto payload = columns_payload(e.written(), coding);
    std::vector<std::byte> joined;
    REQUIRE(join(payload, joined).ok());
    CHECK(std::equal(joined.begin(), joined.end(), e.written().begin(), e.written().end()));
    // A code takes one byte an address (in addr_k, or split between addr_k
    // and alloc_k), addr the first one only: zz(0x5555'1234'567), 7 bytes,
    // the first of them in addr and the others in addr_hi when split.
    const auto sizes = column_sizes(payload);
    using format::Column;
    CHECK(size_of(sizes, Column::kAddrK) + size_of(sizes, Column::kAllocK) == 20000);
    CHECK(size_of(sizes, Column::kAddr) + size_of(sizes, Column::kAddrHi) == 7);
    if (coding == ColumnCoding::kSplit) {
      CHECK(size_of(sizes, Column::kAddrK) == 10000);
      CHECK(size_of(sizes, Column::kAddr) == 1);
    }
  }

  TEST_CASE("split columns hold a varint's first byte, the rest of it in the column's partner") {
    // Sizes of one, two and three bytes as varints, each allocated and freed.
    std::vector<std::byte> buf(1u << 16);
    format::RecordEncoder e(buf);
    REQUIRE(e.thread(1));
    const std::uint64_t sizes[] = {100, 1000, 100000};
    for (int i = 0; i < 3; ++i) {
      REQUIRE(e.alloc(AllocFn::kMalloc, i, 0x7000'0000ull + 0x100000ull * i, sizes[i], 1));
      REQUIRE(e.free(i, 0x7000'0000ull + 0x100000ull * i));
    }
    const auto payload = columns_payload(e.written(), ColumnCoding::kSplit);
    REQUIRE(layout_of(payload) == format::kLayoutSplitColumns);
    REQUIRE(column_sizes(payload).size() == 12);
    using format::Column;
    const std::size_t size_at = column_at(payload, Column::kSize);
    const std::size_t hi_at = column_at(payload, Column::kSizeHi);
    // 100: 0x64. 1000: 0xe8 0x07. 100000: 0xa0 0x8d 0x06.
    CHECK(std::vector<std::byte>(payload.begin() + static_cast<std::ptrdiff_t>(size_at),
                                 payload.begin() + static_cast<std::ptrdiff_t>(size_at + 3)) ==
          std::vector<std::byte>{std::byte{0x64}, std::byte{0xe8}, std::byte{0xa0}});
    CHECK(std::vector<std::byte>(payload.begin() + static_cast<std::ptrdiff_t>(hi_at),
                                 payload.begin() + static_cast<std::ptrdiff_t>(hi_at + 3)) ==
          std::vector<std::byte>{std::byte{0x07}, std::byte{0x8d}, std::byte{0x06}});
    CHECK(size_of(column_sizes(payload), Column::kSizeHi) == 3);
    // Every free is found (code 2: its allocation, the last one), every
    // allocation is a miss: the codes of each kind in their own column.
    const std::size_t free_k = column_at(payload, Column::kAddrK);
    const std::size_t alloc_k = column_at(payload, Column::kAllocK);
    for (int i = 0; i < 3; ++i) {
      CHECK(payload[free_k + i] == std::byte{format::kFirstAgeCode});
      CHECK(payload[alloc_k + i] == std::byte{format::kAddrMissAligned});
    }
    std::vector<std::byte> joined;
    REQUIRE(join(payload, joined).ok());
    CHECK(std::equal(joined.begin(), joined.end(), e.written().begin(), e.written().end()));
  }

  TEST_CASE("a split varint is read whole, and one longer than 64 bits is corrupt") {
    std::vector<std::byte> buf(4096);
    format::RecordEncoder e(buf);
    REQUIRE(e.thread(1));
    REQUIRE(e.alloc(AllocFn::kMalloc, 1, 0x1000, ~0ull, 1));  // size: 10 bytes as a varint
    const auto good = columns_payload(e.written(), ColumnCoding::kSplit);
    const auto [visited, status] = decode_direct(good);
    REQUIRE(status.ok());
    CHECK(visited == std::vector<std::byte>(e.written().begin(), e.written().end()));
    // The size's last byte carries bit 63 (0x01); 0x03 would be bit 64.
    const std::size_t last = column_at(good, format::Column::kSizeHi) + 8;
    REQUIRE(good[last] == std::byte{0x01});
    auto bad = good;
    bad[last] = std::byte{0x03};
    const auto direct = decode_direct(bad).second;
    const auto joined = decode_joined(bad).second;
    REQUIRE_FALSE(direct.ok());
    REQUIRE_FALSE(joined.ok());
    CHECK(direct.error().code == ErrorCode::kCorrupt);
    CHECK(joined.error().code == ErrorCode::kCorrupt);
  }

  TEST_CASE("fresh blocks carved one after another cost one byte each in addr, whatever frees come between") {
    // 1,000 allocations of new addresses, each where glibc would carve it
    // after the one before, and after each a free of a block of an earlier
    // frame (a miss: a delta from the allocation's address).
    std::vector<std::byte> buf(1u << 20);
    format::RecordEncoder e(buf);
    REQUIRE(e.thread(1));
    auto varint_bytes = [](std::int64_t d) {
      std::array<std::byte, format::kMaxVarintBytes> tmp{};
      return format::put_varint(format::zigzag(d >> 4), tmp);
    };
    std::uint64_t at = 0x5555'0000'1010ull;
    std::uint64_t carved_bytes = 0;  // what FORMAT.md says version 4's addr column takes
    std::uint64_t aged_bytes = 0;    // and version 3's
    std::uint64_t previous = 0;
    for (std::uint64_t i = 0; i < 1000; ++i) {
      const std::uint64_t size = 1 + (i * 37) % 500;
      const std::uint64_t freed = 0x5555'0100'0000ull + 0x1000 * ((i * 7919) % 1000);
      REQUIRE(e.alloc(AllocFn::kMalloc, i, at, size, 1));
      REQUIRE(e.free(i, freed));
      carved_bytes += (i == 0 ? varint_bytes(static_cast<std::int64_t>(at)) : 1) +
                      varint_bytes(static_cast<std::int64_t>(freed - at));
      aged_bytes +=
          varint_bytes(static_cast<std::int64_t>(at - previous)) + varint_bytes(static_cast<std::int64_t>(freed - at));
      previous = freed;
      at += format::carve_step(size);
    }
    auto addr_bytes = [&](ColumnCoding coding) {
      const auto payload = columns_payload(e.written(), coding);
      std::vector<std::byte> joined;
      REQUIRE(join(payload, joined).ok());
      CHECK(std::equal(joined.begin(), joined.end(), e.written().begin(), e.written().end()));
      const auto sizes = column_sizes(payload);
      return size_of(sizes, format::Column::kAddr) + size_of(sizes, format::Column::kAddrHi);
    };
    CHECK(addr_bytes(ColumnCoding::kSplit) == carved_bytes);
    CHECK(addr_bytes(ColumnCoding::kCarved) == carved_bytes);
    CHECK(addr_bytes(ColumnCoding::kAged) == aged_bytes);
    CHECK(aged_bytes - carved_bytes > 999);
  }

  TEST_CASE("version 1 files, layout-0 frames and every kind of columns read the same records") {
    auto build = [](FrameLayout layout) {
      DumpBuilder b(memrec::testing::sample_header(), layout);
      for (std::uint32_t seed = 11; seed <= 13; ++seed) {
        b.frame([&](format::RecordEncoder& e) { random_records(e, seed, 300); });
      }
      return b;
    };
    const auto columns = read_records(build(FrameLayout::kColumns));
    CHECK(columns.second > 900);
    CHECK(read_records(build(FrameLayout::kRecords)) == columns);
    CHECK(read_records(build(FrameLayout::kCarvedColumns)) == columns);
    CHECK(read_records(build(FrameLayout::kAgedColumns)) == columns);
    CHECK(read_records(build(FrameLayout::kRingColumns)) == columns);
    CHECK(read_records(build(FrameLayout::kVersion1)) == columns);
  }

  TEST_CASE("a broken column payload is corrupt, naming the frame, and never read past") {
    const ColumnCoding coding = coding_subcase();
    const auto records = records_of(5, 200);
    const auto good = columns_payload(records, coding);
    std::vector<std::byte> out;
    auto error_of = [&](std::vector<std::byte> payload) {
      const Status status = join(payload, out);
      REQUIRE_FALSE(status.ok());
      CHECK(status.error().code == ErrorCode::kCorrupt);
      CHECK(status.error().message.find("c.dat: corrupt frame at offset 99: ") == 0);
      return status.error().message;
    };
    // cut anywhere
    for (std::size_t n = 1; n < good.size(); n += 7) {
      CAPTURE(n);
      error_of(std::vector<std::byte>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n)));
    }
    // a byte too many
    auto longer = good;
    longer.push_back(std::byte{0});
    CHECK(error_of(longer).find("column directory") != std::string::npos);
    // six columns
    auto six = good;
    six[1] = std::byte{6};
    CHECK(error_of(six).find("column directory") != std::string::npos);
    // a code past what the frame holds: the first address names the most
    // recent free (of its class, 1 for 8 bytes), or ring slot 0
    std::vector<std::byte> buf(4096);
    format::RecordEncoder e(buf);
    REQUIRE(e.thread(1));
    REQUIRE(e.alloc(AllocFn::kMalloc, 1, 0x1000, 8, 1));
    auto slot = columns_payload(e.written(), coding);
    // The allocation's code: in alloc_k when split, in addr_k otherwise.
    const std::size_t addr_k_at =
        column_at(slot, coding == ColumnCoding::kSplit ? format::Column::kAllocK : format::Column::kAddrK);
    REQUIRE(slot[addr_k_at] == std::byte{format::kAddrMissAligned});
    slot[addr_k_at] = std::byte{format::kFirstRingSlot};
    CHECK(error_of(slot).find(coding == ColumnCoding::kRings
                                  ? "an address names ring slot 0 of 0"
                                  : "an allocation names free 0 back of 0 in size class 1") != std::string::npos);
    // The direct decoder says the same of each.
    for (const auto& bad : {longer, six, slot}) {
      const auto direct = decode_direct(bad).second;
      REQUIRE_FALSE(direct.ok());
      CHECK(direct.error().message == error_of(bad));
    }
  }

  TEST_CASE("random damage to columns is an error or a stream, never a crash") {
    const ColumnCoding coding = coding_subcase();
    const auto good = columns_payload(records_of(9, 400), coding);
    std::mt19937 rng(3);
    std::vector<std::byte> out;
    for (int i = 0; i < 3000; ++i) {
      auto bad = good;
      for (int flips = 0; flips < 1 + static_cast<int>(rng() % 4); ++flips) {
        bad[1 + rng() % (bad.size() - 1)] = std::byte{static_cast<std::uint8_t>(rng())};
      }
      const Status status = join(bad, out);
      if (!status.ok()) {
        CHECK(status.error().code == ErrorCode::kCorrupt);
      } else {
        CHECK(out.size() <= format::kMaxFrameBytes);
      }
    }
  }
}

TEST_CASE("the column encoder writes the bytes that splitting version-1 records gives") {
  for (std::uint32_t seed = 1; seed <= 30; ++seed) {
    CAPTURE(seed);
    const std::vector<std::byte> records = records_of(seed, 3000);
    std::vector<std::byte> split_storage;
    const format::ColumnBuffers split_cols = column_buffers(split_storage, format::column_capacity(records.size()));
    std::vector<std::byte> want(3 * records.size() + 128);
    memrec::testing::AgeTables fresh;
    const std::size_t want_size = format::split_columns(records, split_cols, want, &fresh.coder);
    REQUIRE(want_size != 0);

    std::vector<std::byte> storage;
    std::vector<std::byte> scratch(64 << 10);
    memrec::testing::AgeTables ages;
    // The encoder wants its frame's whole size in each column.
    format::ColumnEncoder enc(column_buffers(storage, 3 * records.size()), scratch, ages.coder);
    // Twice: begin_frame() forgets the first frame's addresses and deltas
    // (the tables keep them, marked as the last frame's).
    for (int frame = 0; frame < 2; ++frame) {
      enc.begin_frame();
      ColumnEncoderAsRecords as_records(enc);
      random_records(as_records, seed, 3000);
      std::vector<std::byte> got(3 * records.size() + 128);
      std::size_t ends[format::kColumnCount] = {};
      const std::size_t got_size = enc.finish(got, ends);
      REQUIRE(got_size == want_size);
      CHECK(std::equal(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(want_size), got.begin()));
      // The columns' ends, as the writer flushes zstd's blocks at them.
      const auto sizes = column_sizes(got);
      std::size_t at = column_at(got, format::Column::kTags);
      for (std::size_t i = 0; i < format::kColumnCount; ++i) {
        at += sizes[i];
        CHECK(ends[i] == at);
      }
      CHECK(ends[format::kColumnCount - 1] == got_size);
    }
  }
}

TEST_CASE("a full column encoder refuses a record whole and takes it again in a new frame") {
  std::vector<std::byte> storage;
  std::vector<std::byte> scratch(4096);
  memrec::testing::AgeTables ages;
  format::ColumnEncoder enc(column_buffers(storage, 1000), scratch, ages.coder);
  enc.begin_frame();
  int accepted = 0;
  while (enc.alloc(AllocFn::kMalloc, 1000 + accepted, 0x5555'0000'0000ull + accepted * 4096ull, 100000, 7)) ++accepted;
  CHECK(accepted > 10);
  const std::size_t full = enc.size();
  CHECK_FALSE(enc.free(5, 0x10));
  CHECK_FALSE(enc.record([](format::RecordEncoder& r) { return r.thread_name(3, std::string(200, 'x')); }));
  CHECK(enc.size() == full);
  enc.begin_frame();
  CHECK(enc.size() == 0);
  CHECK(enc.record([](format::RecordEncoder& r) { return r.thread_name(3, std::string(200, 'x')); }));
  // A record larger than the scratch buffer never fits.
  CHECK_FALSE(enc.record([](format::RecordEncoder& r) { return r.thread_name(3, std::string(5000, 'x')); }));
}
