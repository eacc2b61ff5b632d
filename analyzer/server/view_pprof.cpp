// /debug/pprof/heap and /debug/pprof/allocs: Go's net/http/pprof paths, so
// `go tool pprof`, Pyroscope and Parca read a memrec view as they read a Go
// service (docs/pprof.md). Both are gzipped profile.proto with the sample
// types of `memrec export --format pprof`; allocs only makes alloc_space the
// default. Without parameters the heap profile is that export's file, byte
// for byte (a live dump's: the table's at its settled edge); ?at=T and
// ?seconds=N answer from the allocation table. On a dump
// still being followed, ?seconds=N without ?at is the next N seconds from
// its live edge: http_server.cpp waits for them outside the lock.
#include <algorithm>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "common/time_spec.h"
#include "export/export_writers.h"
#include "model/window_figures.h"
#include "reports/process_tree.h"
#include "server/request_resolver.h"
#include "server/view_api.h"
#include "server/view_params.h"

namespace memrec::analyzer::server {
namespace {

// ?dump=ID, else the root of the process tree (the service, not a child it spawned).
Checked<const ViewDump*> pprof_dump(const ViewData& data, const ParamFn& param) {
  if (const auto id = param("dump")) return find_dump(data, *id);
  // Among the dumps served: one still loading has no process to place yet.
  std::vector<ProcessKey> keys;
  std::vector<std::size_t> served;
  for (std::size_t i = 0; i < data.dumps.size(); ++i) {
    if (!data.ready(i)) continue;
    const reader::FileHeader& h = data.dumps[i].report.dump.header;
    keys.push_back({h.pid, h.ppid, h.start_mono_ns});
    served.push_back(i);
  }
  if (data.dumps.empty()) return ApiError{404, "No dump is loaded."};
  if (keys.empty()) return ApiError{503, "No dump is loaded yet: ask again in a few seconds.", std::nullopt, 0u};
  return &data.dumps[served[order_process_tree(keys).front().input]];
}

// ?at=T: a time spec (1.5s, 200ms, mark:LABEL), relative to the dump's
// start, clamped to its end; absent: the end.
Checked<std::uint64_t> at_param(const ViewDump& d, const ParamFn& param) {
  const std::uint64_t duration = d.report.duration_ns;
  const auto text = param("at");
  if (!text) return duration;
  auto point = parse_time_point(*text);
  if (!point) return ApiError{400, "at: " + point.error().message + "."};
  if (!point->mark) return std::min(point->ns, duration);
  auto at = resolve_mark(*point->mark, d.report.dump.markers, d.start_ns(), d.report.dump.path);
  if (!at) return ApiError{400, "at: " + at.error().message + "."};
  return std::min(*at, duration);
}

std::int64_t as_signed(std::uint64_t n) { return static_cast<std::int64_t>(n); }

// Allocations in [from, to] (relative), and what was live after `to` minus,
// with `delta`, what was live before `from` (Go's ?seconds=N subtracts the
// whole profile, in-use figures included).
std::vector<PprofValues> window_values(const AllocationTable& t, const ViewDump& d, std::uint64_t from,
                                       std::uint64_t to, bool delta) {
  const std::uint64_t start = d.start_ns();
  const SiteAllocations allocated = site_allocations(t, TimeWindow{start + from, start + to});
  const SiteLive after = live_by_site(t, cursor_at(t, start + to));
  std::vector<PprofValues> values(allocated.count.size());
  for (std::size_t s = 0; s < values.size(); ++s) {
    values[s] = {as_signed(allocated.count[s]), as_signed(allocated.bytes[s]), as_signed(after.count[s]),
                 as_signed(after.bytes[s])};
  }
  if (delta) {
    const SiteLive before = live_by_site(t, cursor_before(t, start + from));
    for (std::size_t s = 0; s < values.size(); ++s) {
      values[s].inuse_objects -= as_signed(before.count[s]);
      values[s].inuse_space -= as_signed(before.bytes[s]);
    }
  }
  return values;
}

Checked<std::optional<std::uint64_t>> seconds_param(const ParamFn& param) {
  const auto text = param("seconds");
  if (!text) return std::optional<std::uint64_t>();
  const auto seconds = parse_count(*text, 1ull << 32);
  if (!seconds || *seconds == 0) return ApiError{400, "seconds must be a whole number of seconds, at least 1."};
  return seconds;
}

}  // namespace

Checked<std::optional<PprofLiveWindow>> pprof_live_window(const ViewData& data, const ParamFn& param) {
  Resolver request(data, param);
  const std::optional<const ViewDump*> found = request.take(pprof_dump(data, param));
  const std::optional<std::optional<std::uint64_t>> seconds = request.take(seconds_param(param));
  if (request.failed()) return request.error();
  const ViewDump& d = **found;
  if (!*seconds || param("at") || !d.followed_edge_ns) return std::optional<PprofLiveWindow>();
  if (**seconds > kPprofMaxWaitSeconds) {
    return ApiError{400, "seconds: a dump still being recorded is waited on for at most " +
                             std::to_string(kPprofMaxWaitSeconds) +
                             " s; ask for fewer seconds, or for a past window with ?at=T."};
  }
  const std::uint64_t from = d.report.duration_ns;
  return std::optional<PprofLiveWindow>(
      PprofLiveWindow{static_cast<std::size_t>(&d - data.dumps.data()), from, from + **seconds * 1'000'000'000});
}

bool pprof_window_complete(const ViewData& data, const PprofLiveWindow& window) {
  if (window.dump >= data.dumps.size()) return true;
  const ViewDump& d = data.dumps[window.dump];
  // Events earlier than the edge are all in: those at `to_ns` too once it is past.
  return !d.followed_edge_ns || *d.followed_edge_ns > d.start_ns() + window.to_ns;
}

ApiAnswer api_pprof(const ViewData& data, PprofProfile profile, const ParamFn& param,
                    const std::optional<PprofLiveWindow>& live) {
  Resolver request(data, param);
  const std::optional<const ViewDump*> found = request.take(pprof_dump(data, param));
  const std::optional<std::optional<std::uint64_t>> seconds_given = request.take(seconds_param(param));
  if (request.failed()) return request.failure();
  const ViewDump& d = live && live->dump < data.dumps.size() ? data.dumps[live->dump] : **found;
  std::optional<std::uint64_t> seconds = *seconds_given;
  std::uint64_t end = 0;
  if (live) {
    end = live->to_ns;
  } else {
    const std::optional<std::uint64_t> at = request.take(at_param(d, param));
    if (request.failed()) return request.failure();
    end = *at;
  }
  const bool allocs = profile == PprofProfile::kAllocs;
  ApiAnswer answer;
  answer.file = ApiFile{{}, "application/octet-stream", "profile"};
  if (!seconds && !param("at") && !live && d.followed_edge_ns) {
    // A live dump's whole-run report runs past the events read for certain
    // (later frames may still hold earlier ones): its profile is the table's
    // at the settled edge, and says that edge is its time.
    end = *d.followed_edge_ns > d.start_ns() ? *d.followed_edge_ns - d.start_ns() : 0;
  } else if (!seconds && !param("at") && !live) {
    answer.file->bytes =
        allocs ? export_pprof_values(d.report, {}, {d.report.dump.header.start_wall_ns, d.report.duration_ns, true})
               : export_pprof({&d.report});
    return answer;
  }
  const AllocationTable* t = d.table();
  if (t == nullptr) return fail(table_missing(d));
  const std::uint64_t from = live ? live->from_ns : seconds ? end - std::min(end, *seconds * 1'000'000'000) : 0;
  const std::vector<PprofValues> values = window_values(*t, d, from, end, seconds.has_value());
  answer.file->bytes =
      export_pprof_values(d.report, values, {d.report.dump.header.start_wall_ns + from, end - from, allocs});
  return answer;
}

}  // namespace memrec::analyzer::server
