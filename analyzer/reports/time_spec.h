// Parses the times of `memrec report --from/--to`: `1.5s`, `200ms`, `+3s`,
// `750us`, `10ns`, `2m`; a bare number is seconds. All are relative to the
// start of the recording (a leading `+` only says so).
#pragma once

#include <cstdint>
#include <string_view>

#include "memrec/reader/result.h"

namespace memrec::analyzer {

// Nanoseconds after the start. kUsage with a sentence naming `text` when it
// is not a time.
Result<std::uint64_t> parse_time_spec(std::string_view text);

}  // namespace memrec::analyzer
