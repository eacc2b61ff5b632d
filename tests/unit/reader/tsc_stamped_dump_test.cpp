// A dump whose events were ordered by the TSC, committed under
// tests/fixtures/dumps (v9_tsc_cross_free_threads.dat:
// tests/programs/cross_free_threads 8 500 under MEMREC_STAMP=tsc and
// MEMREC_WRITERS=4, so blocks cross threads and writers): its times are ns
// like any dump's, and merged by them they replay the heap exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "memrec/format/records.h"
#include "memrec/reader/dump_reader.h"

using namespace memrec;
using namespace memrec::reader;

namespace {

std::string fixture(const std::string& name) { return std::string(MEMREC_FIXTURE_DUMPS) + "/" + name; }

struct HeapStep {
  std::uint64_t time_ns;
  int rank;  // releases first at equal times (FORMAT.md, "Order")
  std::uint64_t tid;
  std::size_t seq;  // the thread's own order
  std::uint64_t addr;
  bool operator<(const HeapStep& o) const {
    return std::tie(time_ns, rank, tid, seq) < std::tie(o.time_ns, o.rank, o.tid, o.seq);
  }
};

}  // namespace

TEST_SUITE("reader/tsc_stamped_dump") {
  TEST_CASE("a TSC-ordered dump names its stamp source and keeps its times between start and end in ns") {
    const auto dump = read_all(fixture("v9_tsc_cross_free_threads.dat"));
    REQUIRE(dump.ok());
    CHECK(dump->facts.clean_end);
    CHECK(dump->facts.counters.at(static_cast<std::uint64_t>(format::Counter::kStampTsc)) == 1);
    CHECK(dump->facts.counters.at(static_cast<std::uint64_t>(format::Counter::kTscReadNs)) > 0);
    const std::uint64_t start = dump->header.start_mono_ns;
    std::uint64_t end = 0;
    for (const Record& r : dump->records) {
      if (const auto* e = std::get_if<EndRecord>(&r)) end = e->time_ns;
    }
    REQUIRE(end > start);
    // the run took milliseconds: raw TSC values would lie far outside
    CHECK(end - start < 10'000'000'000ull);
    std::map<std::uint64_t, std::uint64_t> last_by_thread;
    std::size_t events = 0;
    for (const Record& r : dump->records) {
      const auto check = [&](std::uint64_t tid, std::uint64_t t) {
        CHECK(t >= start);
        CHECK(t <= end);
        CHECK(t >= last_by_thread[tid]);  // a thread's times never go back
        last_by_thread[tid] = t;
        ++events;
      };
      if (const auto* a = std::get_if<AllocRecord>(&r)) check(a->tid, a->time_ns);
      if (const auto* f = std::get_if<FreeRecord>(&r)) check(f->tid, f->time_ns);
    }
    CHECK(events == 4016 + 4004);
  }

  TEST_CASE("merged by time, releases first, every free finds its block live and no block is allocated twice") {
    const auto dump = read_all(fixture("v9_tsc_cross_free_threads.dat"));
    REQUIRE(dump.ok());
    std::vector<HeapStep> steps;
    std::map<std::uint64_t, std::size_t> seq;
    for (const Record& r : dump->records) {
      if (const auto* a = std::get_if<AllocRecord>(&r))
        steps.push_back({a->time_ns, 1, a->tid, seq[a->tid]++, a->addr});
      if (const auto* f = std::get_if<FreeRecord>(&r)) steps.push_back({f->time_ns, 0, f->tid, seq[f->tid]++, f->addr});
    }
    std::sort(steps.begin(), steps.end());
    std::set<std::uint64_t> live;
    std::size_t unmatched = 0;
    std::size_t twice = 0;
    std::size_t crossed = 0;
    std::map<std::uint64_t, std::uint64_t> owner;
    for (const HeapStep& s : steps) {
      if (s.rank == 1) {
        twice += !live.insert(s.addr).second;
        owner[s.addr] = s.tid;
      } else {
        unmatched += live.erase(s.addr) == 0;
        crossed += owner[s.addr] != s.tid;
      }
    }
    CHECK(unmatched == 0);
    CHECK(twice == 0);
    CHECK(crossed >= 8 * 500);  // every produce() block is freed by the next thread
    CHECK(live.size() == 12);   // memrec info: 12 blocks live at the end
  }
}
