// Dumps the recorder of an earlier format version wrote, committed under
// tests/fixtures/dumps (v<N>_<program>.dat, from tests/programs run under that
// version's libmemrec.so): this reader must still read them, event for event.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "memrec/reader/dump_reader.h"

using namespace memrec;
using namespace memrec::reader;

namespace {

std::string fixture(const std::string& name) { return std::string(MEMREC_FIXTURE_DUMPS) + "/" + name; }

struct HeapEvent {
  std::uint64_t time_ns = 0;
  int kind = 0;  // 0 free, 1 allocation: at equal times frees go first (FORMAT.md, "Order")
  std::uint64_t addr = 0;
  std::uint64_t size = 0;  // of a malloc(); 0 for other allocation functions
};

// The blocks live at the end, by address (with their size if malloc() made them): each thread's allocations and frees
// in its records' order, the threads merged by time with frees first at equal
// times, as FORMAT.md ("Order") tells a reader. `allocations` counts malloc()s
// by size.
struct Replay {
  std::map<std::uint64_t, std::uint64_t> live;
  std::map<std::uint64_t, std::uint64_t> allocations;
  std::size_t frees_of_unknown = 0;
};

Replay replay(const DumpContents& dump) {
  std::map<std::uint64_t, std::vector<HeapEvent>> by_thread;
  Replay out;
  for (const Record& r : dump.records) {
    if (const auto* a = std::get_if<AllocRecord>(&r)) {
      const bool malloc = a->fn == format::AllocFn::kMalloc;
      by_thread[a->tid].push_back({a->time_ns, 1, a->addr, malloc ? a->size : 0});
      if (malloc) ++out.allocations[a->size];
    } else if (const auto* f = std::get_if<FreeRecord>(&r)) {
      by_thread[f->tid].push_back({f->time_ns, 0, f->addr, 0});
    } else if (const auto* re = std::get_if<ReallocRecord>(&r)) {
      by_thread[re->tid].push_back({re->free_ns, 0, re->old_addr, 0});
      by_thread[re->tid].push_back({re->alloc_ns, 1, re->new_addr, 0});
    }
  }
  std::map<std::uint64_t, std::size_t> next;
  for (;;) {
    const HeapEvent* first = nullptr;
    std::uint64_t first_tid = 0;
    for (const auto& [tid, events] : by_thread) {
      if (next[tid] == events.size()) continue;
      const HeapEvent& e = events[next[tid]];
      if (first == nullptr || std::tie(e.time_ns, e.kind) < std::tie(first->time_ns, first->kind)) {
        first = &e;
        first_tid = tid;
      }
    }
    if (first == nullptr) break;
    ++next[first_tid];
    if (first->kind == 1) {
      out.live[first->addr] = first->size;
    } else if (out.live.erase(first->addr) == 0) {
      ++out.frees_of_unknown;
    }
  }
  return out;
}

std::size_t live_of_size(const Replay& r, std::uint64_t size) {
  return static_cast<std::size_t>(
      std::count_if(r.live.begin(), r.live.end(), [&](const auto& block) { return block.second == size; }));
}

// leak_three's dump, recorded by the version `version` recorder: exactly
// 3 x 4242 bytes stay live, and each of churn()'s 100 sizes was allocated
// once and freed.
void check_leak_three(std::uint16_t version) {
  const auto dump = read_all(fixture("v" + std::to_string(version) + "_leak_three.dat"));
  REQUIRE(dump.ok());
  CHECK(dump->header.version == version);
  CHECK(dump->facts.clean_end);
  CHECK_FALSE(dump->facts.truncated_at.has_value());
  CHECK(dump->facts.cut.empty());
  const Replay r = replay(*dump);
  CHECK(r.allocations.at(4242) == 3);
  CHECK(live_of_size(r, 4242) == 3);
  for (std::uint64_t i = 0; i < 100; ++i) {
    CAPTURE(i);
    CHECK(r.allocations.at(i * 37 + 1) == 1);
    CHECK(live_of_size(r, i * 37 + 1) == 0);
  }
  CHECK(r.frees_of_unknown == 0);
  // one writer: its Counters are the dump's
  CHECK(dump->facts.counters_by_writer.size() == 1);
}

// threads_pass's dump (4 threads handing 20,000 blocks each to the next),
// recorded by the version `version` recorder, whose stamps come from the
// shared counter: produce()'s 80,000 blocks (16 + (seq % 61) * 8 bytes)
// were all allocated and none is left live, so every free sorts after its
// allocation.
void check_threads_pass(std::uint16_t version) {
  const auto dump = read_all(fixture("v" + std::to_string(version) + "_threads_pass.dat"));
  REQUIRE(dump.ok());
  CHECK(dump->header.version == version);
  CHECK(dump->facts.clean_end);
  std::size_t threads = 0;
  for (const Record& rec : dump->records) threads += std::holds_alternative<ThreadStartRecord>(rec) ? 1 : 0;
  CHECK(threads == 5);
  const Replay r = replay(*dump);
  std::size_t produced = 0;
  for (std::uint64_t k = 0; k < 61; ++k) produced += r.allocations.count(16 + k * 8) ? r.allocations.at(16 + k * 8) : 0;
  CHECK(produced == 80'000);
  for (std::uint64_t k = 0; k < 61; ++k) CHECK(live_of_size(r, 16 + k * 8) == 0);
  CHECK(r.frees_of_unknown == 0);
}

}  // namespace

TEST_SUITE("reader/earlier_versions") {
  TEST_CASE("version 7: leak_three's dump holds its three leaked blocks and its freed churn") { check_leak_three(7); }

  TEST_CASE("version 7: threads_pass's 80,000 cross-thread frees order after their allocations") {
    check_threads_pass(7);
  }

  TEST_CASE("version 8 (one writer): leak_three's dump holds its three leaked blocks and its freed churn") {
    check_leak_three(8);
  }

  TEST_CASE("version 8 (one writer): threads_pass's 80,000 cross-thread frees order after their allocations") {
    check_threads_pass(8);
  }
}
