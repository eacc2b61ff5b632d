// /sites/{site}/series: one call site's live bytes and live blocks over the
// range, exact at the range's first ns and at each bucket's last
// (model/site_live_series.h), with the markers and recording-off periods in
// it, for the chart an expanded site draws. A grouped site sums its members.
#include <variant>

#include "model/site_live_series.h"
#include "server/view_api.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultBuckets = 200;
constexpr std::uint64_t kMaxBuckets = 1000;

json relative(const ViewDump& d, const std::vector<std::uint64_t>& times) {
  json out = json::array();
  for (const std::uint64_t t : times) out.push_back(t - d.start_ns());
  return out;
}

}  // namespace

ApiAnswer api_site_series(const ViewData& data, const std::string& dump_id, const std::string& site_id,
                          const ParamFn& param) {
  const auto request = site_request(data, dump_id, site_id, param);
  if (const auto* e = std::get_if<ApiError>(&request)) return fail(*e);
  const auto& [dump, set, id, w] = std::get<SiteRequest>(request);
  const ViewDump& d = *dump;
  const auto buckets = count_param(param, "buckets", 1, kMaxBuckets, kDefaultBuckets);
  if (const auto* e = std::get_if<ApiError>(&buckets)) return fail(*e);
  const auto table = table_of(d);
  if (const auto* e = std::get_if<ApiError>(&table)) return fail(*e);

  const GrowthGrid grid = GrowthGrid::over(w.from_ns, w.to_ns, std::get<std::uint64_t>(buckets));
  const std::vector<std::uint32_t> members = set.members(id);
  const LiveSeries s = site_live_series(*std::get<0>(table), members, grid);
  return ok({{"id", id},
             {"bucket_ns", grid.bucket_ns},
             {"time_ns", relative(d, s.time_ns)},
             {"live_bytes", s.bytes},
             {"live_count", s.count},
             {"end", {{"live_bytes", s.bytes.back()}, {"live_count", s.count.back()}}},
             {"markers", markers_within(d, w)},
             {"range", range_json(d, w)}});
}

}  // namespace memrec::analyzer::server
