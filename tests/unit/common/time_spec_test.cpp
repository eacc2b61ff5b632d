// `--from/--to` times: units, fractions read exactly, what is refused, and mark:LABEL resolved against markers.
#include <doctest/doctest.h>

#include "common/time_spec.h"

#include <vector>

using memrec::analyzer::parse_time_point;
using memrec::analyzer::parse_time_spec;
using memrec::analyzer::resolve_mark;
using memrec::format::Source;
using memrec::reader::MarkerRecord;

namespace {

// Markers at start + 10, 20, 30 and 40 ns: a, b, a, "c#1" (a label with a hash of its own).
const std::vector<MarkerRecord> kMarkers = {
    {1010, Source::kApi, "a"}, {1020, Source::kCtl, "b"}, {1030, Source::kApi, "a"}, {1040, Source::kApi, "c#1"}};

}  // namespace

TEST_SUITE("common/time_spec") {
  TEST_CASE("reads every unit, a leading plus and exact fractions") {
    CHECK(parse_time_spec("1.5s").value() == 1500000000ull);
    CHECK(parse_time_spec("200ms").value() == 200000000ull);
    CHECK(parse_time_spec("+3s").value() == 3000000000ull);
    CHECK(parse_time_spec("750us").value() == 750000ull);
    CHECK(parse_time_spec("10ns").value() == 10ull);
    CHECK(parse_time_spec("2m").value() == 120000000000ull);
    CHECK(parse_time_spec("1.1s").value() == 1100000000ull);
    CHECK(parse_time_spec("4").value() == 4000000000ull);
  }

  TEST_CASE("refuses what is not a time") {
    for (const char* bad : {"", "s", "soon", "1.2.3s", "5 parsecs", "-1s", "99999999999999999999h"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_time_spec(bad).ok());
    }
  }

  TEST_CASE("mark:LABEL is a marker's label, kept whole; other times are durations") {
    const auto mark = parse_time_point("mark:warmup done#2");
    REQUIRE(mark.ok());
    CHECK(mark->mark == "warmup done#2");
    const auto time = parse_time_point("1.5s");
    REQUIRE(time.ok());
    CHECK_FALSE(time->mark.has_value());
    CHECK(time->ns == 1500000000ull);
    CHECK_FALSE(parse_time_point("mark:").ok());
    CHECK_FALSE(parse_time_point("mark").ok());
  }

  TEST_CASE("a marker resolves to its first occurrence, #N to its Nth, an exact label first") {
    CHECK(resolve_mark("a", kMarkers, 1000, "d.dat").value() == 10);
    CHECK(resolve_mark("a#2", kMarkers, 1000, "d.dat").value() == 30);
    CHECK(resolve_mark("a#1", kMarkers, 1000, "d.dat").value() == 10);
    CHECK(resolve_mark("b", kMarkers, 1000, "d.dat").value() == 20);
    CHECK(resolve_mark("c#1", kMarkers, 1000, "d.dat").value() == 40);
    CHECK(resolve_mark("a", kMarkers, 2000, "d.dat").value() == 0);  // before the start: at it
  }

  TEST_CASE("an unknown label lists the known ones; a missing occurrence says how many there are") {
    const auto unknown = resolve_mark("z", kMarkers, 1000, "d.dat");
    REQUIRE_FALSE(unknown.ok());
    CHECK(unknown.error().message == "d.dat: no marker 'z'; its markers are 'a', 'b', 'c#1'");
    const auto third = resolve_mark("a#3", kMarkers, 1000, "d.dat");
    REQUIRE_FALSE(third.ok());
    CHECK(third.error().message == "d.dat: marker 'a' occurs 2 times; mark:a#3 asks for occurrence 3");
    const auto none = resolve_mark("a", {}, 1000, "e.dat");
    REQUIRE_FALSE(none.ok());
    CHECK(none.error().message.starts_with("e.dat: no marker 'a': the dump has no markers"));
    CHECK_FALSE(resolve_mark("a#0", kMarkers, 1000, "d.dat").ok());
  }
}
