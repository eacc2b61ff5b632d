// The answers of `memrec view`'s HTTP API (docs/api.md), as pure functions
// of the loaded dumps and the request's parameters, so they are tested
// without a socket. http_server.cpp maps routes onto them. Nothing here
// trusts a parameter: each is checked and a bad one is an ApiError (4xx).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/dump_load.h"
#include "server/view_model.h"

namespace memrec::analyzer::server {

struct ViewOptionsForExport {
  std::vector<std::string> debug_dirs;
  unsigned threads = 0;
};

struct ViewData {
  std::vector<ViewDump> dumps;
  // memrec view --follow (server/view_follow.cpp): each dump's state
  // ("live", "ended", "cut"), and the lock under which the follow loop
  // replaces and appends dumps (exclusive) while requests read them
  // (shared, http_server.cpp). Empty and null without --follow.
  std::vector<std::string> states;
  std::shared_ptr<std::shared_mutex> follow_lock;
  std::vector<std::string> warnings;  // the symbolizer's, once each
  ViewOptionsForExport export_options;
  // memrec view without --follow, whose dumps load while it serves
  // (view_loads.h): dump i's load state; its ViewDump is a placeholder until
  // ready, replaced under follow_lock. Empty: every dump is ready.
  std::vector<std::unique_ptr<DumpLoad>> loads;

  bool ready(std::size_t i) const { return i >= loads.size() || loads[i]->state() == LoadState::kReady; }
};

// A request the API refuses: the HTTP status (4xx; 503 while the dump's
// allocation table is built) and a sentence for `{"error": …}`.
struct ApiError {
  int status = 400;
  std::string message;
  // While the table is built: how far (`{"building": percent}`, so the page waits and asks again).
  std::optional<unsigned> building_percent = std::nullopt;
  // While the dump itself loads: how far (`{"loading": percent}`, likewise).
  std::optional<unsigned> loading_percent = std::nullopt;
};

// A request's value, or why the API refuses it (server/request_resolver.h
// resolves them in order and keeps the first refusal).
template <typename T>
using Checked = std::variant<T, ApiError>;

// A download instead of JSON (/export).
struct ApiFile {
  std::string bytes;
  std::string content_type;
  std::string filename;
};

struct ApiAnswer {
  nlohmann::json body;
  std::optional<ApiError> error;
  std::optional<ApiFile> file;
};

// Reads one query parameter; absent is std::nullopt.
using ParamFn = std::function<std::optional<std::string>(const std::string&)>;

// Every dump endpoint takes ?from=NS&to=NS (ns since the dump's start, both
// included; default the whole dump). Those that name call sites (sites,
// flame, site, instant, allocations, diff/flame) take ?raw=1 and
// ?group=label (view_sites.h); a site id is then one of that naming's.
ApiAnswer api_dumps(const ViewData& data);
ApiAnswer api_summary(const ViewData& data, const std::string& dump_id, const ParamFn& param);
ApiAnswer api_timeline(const ViewData& data, const std::string& dump_id, const ParamFn& param);
// ?sort=leaked|count|peak|allocated|allocations|temporary|retained|live|growth|kept &offset &limit &at &spark.
// retained is the runtime's caches; kept (also with ?kept=1) is what the range
// allocated and is still live at `at`, or at its end: report --retained FROM..TO --at AT.
ApiAnswer api_sites(const ViewData& data, const std::string& dump_id, const ParamFn& param);
// ?metric=leaked|peak|allocated|allocations|temporary|live &at: the call sites as one
// tree, outermost frame at the root, frames merged by label; nodes under
// 1/2000 of the total are dropped (counted in "pruned").
ApiAnswer api_flame(const ViewData& data, const std::string& dump_id, const ParamFn& param);
// ?metric&at&raw as /flame, &search=TEXT&limit=N&name=NAME: the functions of the
// sites (frame names as /flame's), each with its self and inclusive value,
// largest inclusive first; with `name`, that function's callers and callees.
ApiAnswer api_functions(const ViewData& data, const std::string& dump_id, const ParamFn& param);
// ?from&to&at: the site's figures over the range, its frames, and its live bytes at `at`.
ApiAnswer api_site(const ViewData& data, const std::string& dump_id, const std::string& site_id, const ParamFn& param);
// ?from&to&buckets=N (1..1000, default 200): the site's live bytes and blocks at
// the range's first ns and at the end of each of N buckets (view_site_series.cpp).
ApiAnswer api_site_series(const ViewData& data, const std::string& dump_id, const std::string& site_id,
                          const ParamFn& param);
// ?from&to&limit: the anonymous mappings (view_maps.cpp): totals, the mapped
// bytes over time, the mappings live at the end and each mapping stack's figures.
ApiAnswer api_maps(const ViewData& data, const std::string& dump_id, const ParamFn& param);
ApiAnswer api_threads(const ViewData& data, const std::string& dump_id);
ApiAnswer api_instant(const ViewData& data, const std::string& dump_id, const ParamFn& param);
ApiAnswer api_allocations(const ViewData& data, const std::string& dump_id, const ParamFn& param);
ApiAnswer api_allocation(const ViewData& data, const std::string& dump_id, const std::string& index,
                         const ParamFn& param);
ApiAnswer api_export(const ViewData& data, const std::string& dump_id, const ParamFn& param);
// /debug/pprof/heap and /debug/pprof/allocs (view_pprof.cpp, docs/pprof.md):
// ?dump=ID (default: the root process), ?at=T (a time spec; default the
// end), ?seconds=N (the N seconds up to `at`, in-use as a delta; on a dump
// still followed without `at`, the next N seconds, at most
// kPprofMaxWaitSeconds, which the request waits for as Go's does).
enum class PprofProfile { kHeap, kAllocs };
inline constexpr std::uint64_t kPprofMaxWaitSeconds = 60;
// The next N seconds of a live dump: its index and the window, ns since its start.
struct PprofLiveWindow {
  std::size_t dump = 0;
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = 0;
};
// Whether the request waits for a live dump's next seconds (asked under the
// lock, which the waiting request then lets go of), and until when.
Checked<std::optional<PprofLiveWindow>> pprof_live_window(const ViewData& data, const ParamFn& param);
// Whether every event of the window has come (or the dump is no longer followed).
bool pprof_window_complete(const ViewData& data, const PprofLiveWindow& window);
ApiAnswer api_pprof(const ViewData& data, PprofProfile profile, const ParamFn& param,
                    const std::optional<PprofLiveWindow>& live = std::nullopt);
// The diff endpoints take base=ID&new=ID and each side's range,
// base_from/base_to and new_from/new_to (view_diff.h).
ApiAnswer api_diff_flame(const ViewData& data, const ParamFn& param);
// ?metric&sort=magnitude|delta|percent&limit: the sites whose metric changed (diff/site_diff.h).
ApiAnswer api_diff_sites(const ViewData& data, const ParamFn& param);
ApiAnswer api_diff_report(const ViewData& data, const ParamFn& param);

}  // namespace memrec::analyzer::server
