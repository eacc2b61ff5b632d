// `memrec diff --fail-if` thresholds: parsing and when they are crossed.
#include "diff/fail_if.h"

#include <doctest/doctest.h>

using namespace memrec::analyzer;

namespace {

HeapDiff totals(std::uint64_t base_leaked, std::uint64_t new_leaked) {
  HeapDiff d;
  d.base_totals.leaked_bytes = base_leaked;
  d.next_totals.leaked_bytes = new_leaked;
  return d;
}

}  // namespace

TEST_SUITE("export/fail_if") {
  TEST_CASE("reads amounts with binary and decimal units and percentages") {
    auto mib = parse_threshold("leaked>1MiB");
    REQUIRE(mib.ok());
    CHECK(mib->amount == 1048576.0);
    CHECK_FALSE(mib->percent);
    auto kb = parse_threshold("peak>2KB");
    REQUIRE(kb.ok());
    CHECK(kb->amount == 2000.0);
    auto pct = parse_threshold("peak>5%");
    REQUIRE(pct.ok());
    CHECK(pct->percent);
    CHECK(pct->amount == 5.0);
    CHECK(parse_threshold("new-leak").ok());
  }

  TEST_CASE("rejects unknown metrics and malformed amounts as usage errors") {
    for (const char* bad : {"speed>5%", "peak", "peak>", "peak>5XB", "peak>-1", "peak>>5"}) {
      CAPTURE(bad);
      auto t = parse_threshold(bad);
      REQUIRE_FALSE(t.ok());
      CHECK(t.error().code == memrec::ErrorCode::kUsage);
    }
  }

  TEST_CASE("a byte threshold is crossed only by growth beyond it") {
    const auto t = parse_threshold("leaked>100");
    REQUIRE(t.ok());
    CHECK_FALSE(crossed(*t, totals(1000, 1100)).has_value());
    CHECK(crossed(*t, totals(1000, 1101)).has_value());
    CHECK_FALSE(crossed(*t, totals(5000, 0)).has_value());
  }

  TEST_CASE("a percentage is of the base, and any growth from zero crosses it") {
    const auto t = parse_threshold("leaked>10%");
    REQUIRE(t.ok());
    CHECK_FALSE(crossed(*t, totals(1000, 1100)).has_value());
    CHECK(crossed(*t, totals(1000, 1101)).has_value());
    CHECK(crossed(*t, totals(0, 1)).has_value());
  }

  TEST_CASE("new-leak names the first site that leaks now and did not before") {
    const auto t = parse_threshold("new-leak");
    REQUIRE(t.ok());
    HeapDiff d;
    d.frames = {{"old_leak", "a.c", 1, false, "old_leak"}, {"new_leak", "a.c", 2, false, "new_leak"}};
    SiteDiff grew;  // leaked before already: not new
    grew.frames = {0};
    grew.base.leaked_bytes = 10;
    grew.next.leaked_bytes = 20;
    d.sites.push_back(grew);
    CHECK_FALSE(crossed(*t, d).has_value());
    SiteDiff fresh;
    fresh.frames = {1};
    fresh.next.leaked_bytes = 42;
    fresh.next.leaked_count = 1;
    d.sites.push_back(fresh);
    const auto why = crossed(*t, d);
    REQUIRE(why.has_value());
    CHECK(why->find("new_leak leaks 42 bytes in 1 block,") != std::string::npos);
  }
}
