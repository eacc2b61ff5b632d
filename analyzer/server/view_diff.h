// The two dumps and ranges a diff endpoint compares (docs/api.md "Diff"):
// `base` and `new` are dump ids, the same id twice for two ranges of one
// dump; base_from/base_to and new_from/new_to are ns since each dump's start.
// Shared by the diff flamegraph and table (view_diff.cpp) and the diff
// report's download (view_downloads.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

#include "server/view_api.h"

namespace memrec::analyzer::server {

struct DiffSideRequest {
  const ViewDump* dump = nullptr;
  std::uint64_t id = 0;
  TimeWindow window;                     // absolute: the range, or the whole run
  std::optional<std::uint64_t> from_ns;  // as given, relative; absent: the start
  std::optional<std::uint64_t> to_ns;    // absent: the end
};

struct DiffRequest {
  DiffSideRequest base;
  DiffSideRequest next;
};

// The request's dumps and ranges, or why not (400/404); `endpoint` names it in messages.
Checked<DiffRequest> diff_request(const ViewData& data, const ParamFn& param, std::string_view endpoint);

// {"from_ns", "to_ns"}, relative, of a side (to_ns null: the end).
nlohmann::json side_range_json(const DiffSideRequest& side);

}  // namespace memrec::analyzer::server
