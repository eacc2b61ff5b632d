// A dump the pool of writers wrote, committed under tests/fixtures/dumps
// (v9_cross_free_threads.dat: tests/programs/cross_free_threads 8 500 under
// MEMREC_WRITERS=4): what the recorder promises a reader across writers,
// checked record by record in the file's order.
#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include "memrec/format/recorder_threads.h"
#include "memrec/reader/dump_reader.h"

using namespace memrec;
using namespace memrec::reader;

namespace {

std::string fixture(const std::string& name) { return std::string(MEMREC_FIXTURE_DUMPS) + "/" + name; }

}  // namespace

TEST_SUITE("reader/writer_pool_dump") {
  TEST_CASE("every stack an event of any writer uses is defined earlier in the file") {
    // given the dump of 8 threads dealt to 4 writers
    const auto dump = read_all(fixture("v9_cross_free_threads.dat"));
    REQUIRE(dump.ok());
    CHECK(dump->header.version == 9);
    CHECK(dump->facts.clean_end);
    // when its records are read in the file's order
    std::set<std::uint32_t> defined;
    std::size_t uses = 0;
    for (const Record& r : dump->records) {
      if (const auto* s = std::get_if<StackRecord>(&r)) defined.insert(s->id.value);
      if (const auto* a = std::get_if<AllocRecord>(&r); a != nullptr && a->stack.value != 0) {
        // then each allocation's stack came before it
        CHECK(defined.count(a->stack.value) == 1);
        ++uses;
      }
    }
    CHECK(uses >= 8 * 500);
  }

  TEST_CASE("the counters are four writers' last records added up") {
    // given the same dump
    const auto dump = read_all(fixture("v9_cross_free_threads.dat"));
    REQUIRE(dump.ok());
    // then each of the 4 writers left counters, each counting its own thread's keys
    const auto& by_writer = dump->facts.counters_by_writer;
    REQUIRE(by_writer.size() == 4);
    std::uint64_t events = 0;
    for (const auto& [writer, values] : by_writer) {
      CAPTURE(writer);
      const auto w = static_cast<std::uint32_t>(writer);
      CHECK(values.at(format::recorder_events_key(w)) == values.at(1));
      CHECK(values.at(format::recorder_cpu_key(w)) > 0);
      events += values.at(1);
    }
    // and the dump's events are their sum, every allocation and free in it
    CHECK(dump->facts.counters.at(1) == events);
    std::uint64_t heap_events = 0;
    for (const Record& r : dump->records) {
      heap_events += std::holds_alternative<AllocRecord>(r) || std::holds_alternative<FreeRecord>(r) ? 1 : 0;
    }
    CHECK(heap_events == events);
  }
}
