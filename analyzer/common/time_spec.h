// Parses the times of `--from/--to` (report, diff, export): `1.5s`, `200ms`,
// `+3s`, `750us`, `10ns`, `2m`; a bare number is seconds. All are relative to
// the start of the recording (a leading `+` only says so). `mark:LABEL` is the
// time of the dump's first marker named LABEL, `mark:LABEL#N` of its Nth
// (docs/analyzer.md, "Markers"); it is resolved once the dump's markers are read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "memrec/reader/records.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

// Nanoseconds after the start. kUsage with a sentence naming `text` when it
// is not a time.
Result<std::uint64_t> parse_time_spec(std::string_view text);

// A time as given: nanoseconds after the start, or what follows `mark:`.
struct TimePoint {
  std::uint64_t ns = 0;
  std::optional<std::string> mark;
};
// parse_time_spec(), or a `mark:` with a non-empty label.
Result<TimePoint> parse_time_point(std::string_view text);

// The time of `mark` (as after `mark:`) among `markers` (by time), in
// nanoseconds after `start_ns`. A label that is not there exactly but ends
// in `#N` names the Nth marker of the label before it. kUsage for an
// unknown label (the message lists the known ones, from `file`) or a missing
// occurrence.
Result<std::uint64_t> resolve_mark(std::string_view mark, const std::vector<reader::MarkerRecord>& markers,
                                   std::uint64_t start_ns, std::string_view file);

}  // namespace memrec::analyzer
