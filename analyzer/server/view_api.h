// The JSON answers of `memrec view`'s HTTP API (docs/api.md), as pure
// functions of the loaded dumps and the request's parameters, so they are
// tested without a socket. http_server.cpp maps routes onto them. Nothing
// here trusts a parameter: each is checked and a bad one is an ApiError (4xx).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/heap_timeline.h"
#include "reports/heap_report.h"

namespace memrec::analyzer::server {

// One loaded dump: its report (sites symbolized) and its timeline.
struct ViewDump {
  HeapReport report;
  HeapTimeline timeline;
};

struct ViewData {
  std::vector<ViewDump> dumps;
  std::vector<std::string> warnings;  // the symbolizer's, once each
};

// A request the API refuses: the HTTP status (4xx) and a sentence for `{"error": …}`.
struct ApiError {
  int status = 400;
  std::string message;
};

struct ApiAnswer {
  nlohmann::json body;
  std::optional<ApiError> error;
};

// Reads one query parameter; absent is std::nullopt.
using ParamFn = std::function<std::optional<std::string>(const std::string&)>;

ApiAnswer api_dumps(const ViewData& data);
ApiAnswer api_summary(const ViewData& data, const std::string& dump_id);
ApiAnswer api_timeline(const ViewData& data, const std::string& dump_id);
// ?sort=leaked|count|peak|allocated|allocations|temporary|retained &offset=N &limit=N (1..1000)
ApiAnswer api_sites(const ViewData& data, const std::string& dump_id, const ParamFn& param);
// ?metric=leaked|peak|allocated|allocations|temporary: the call sites as one
// tree, outermost frame at the root, frames merged by label; nodes under
// 1/2000 of the total are dropped (counted in "pruned").
ApiAnswer api_flame(const ViewData& data, const std::string& dump_id, const ParamFn& param);
ApiAnswer api_site(const ViewData& data, const std::string& dump_id, const std::string& site_id);

}  // namespace memrec::analyzer::server
