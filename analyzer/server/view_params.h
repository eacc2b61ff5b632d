// Parameter checks shared by the API's handlers: ids, counts, times and
// ranges, each strict (digits only, bounded); a bad one is an ApiError.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "model/retention.h"
#include "server/view_api.h"

namespace memrec::analyzer::server {

inline ApiAnswer fail(int status, std::string message) {
  return {nlohmann::json(nullptr), ApiError{status, std::move(message)}, std::nullopt};
}
inline ApiAnswer fail(const ApiError& e) { return {nlohmann::json(nullptr), e, std::nullopt}; }
inline ApiAnswer ok(nlohmann::json body) { return {std::move(body), std::nullopt, std::nullopt}; }

// A decimal number without sign or spaces, at most `max` (and 20 digits).
std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max);

// The dump named by a path segment, or why not.
Checked<const ViewDump*> find_dump(const ViewData& data, const std::string& id);

// An optional count parameter: `fallback` when absent, an error when not in [min, max].
Checked<std::uint64_t> count_param(const ParamFn& param, const std::string& name, std::uint64_t min, std::uint64_t max,
                                   std::uint64_t fallback);

// ?from&to as an absolute window of `dump` (default: its whole run).
Checked<TimeWindow> range_param(const ViewDump& dump, const ParamFn& param);
// A time parameter (ns since the dump's start) as absolute ns; nullopt if absent.
Checked<std::optional<std::uint64_t>> time_param(const ViewDump& dump, const ParamFn& param, const std::string& name);

// The dump's allocation table; a 503 while it is built, a 500 if it never will be.
Checked<const AllocationTable*> table_of(const ViewDump& dump);
// That error, for a caller that found the table null (it may be there by now).
ApiError table_missing(const ViewDump& dump);
// The range's figures: the whole run's at once, any other once the table is built.
Checked<std::shared_ptr<const RangeFigures>> figures_of(const ViewDump& dump, const TimeWindow& window);

// {"from_ns", "to_ns"} relative to the dump's start.
nlohmann::json range_json(const ViewDump& dump, const TimeWindow& window);
// What `window` kept at `at_ns` (model/retention.h), as /sites and /allocations
// answer it: {"from_ns", "to_ns", "at_ns"} relative to the start, "bytes", "count".
nlohmann::json kept_json(const ViewDump& dump, const TimeWindow& window, std::uint64_t at_ns, const Retention& kept);
// The dump's markers within the window, times relative to its start, as the summary lists them.
nlohmann::json markers_within(const ViewDump& dump, const TimeWindow& window);

}  // namespace memrec::analyzer::server
