// `--from/--to` times: units, fractions read exactly, and what is refused.
#include <doctest/doctest.h>

#include "reports/time_spec.h"

using memrec::analyzer::parse_time_spec;

TEST_SUITE("analyzer/time_spec") {
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
}
