// /sites/{site}/series: one call site's live bytes and live blocks over the
// range, exact at the range's first ns and at each bucket's last
// (model/site_live_series.h), with the markers and recording-off periods in
// it, for the chart an expanded site draws. A grouped site sums its members.
#include <variant>

#include "model/site_live_series.h"
#include "server/request_resolver.h"
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
  Resolver request(data, param);
  const std::optional<SiteRequest> site = request.site(dump_id, site_id);
  const std::optional<std::uint64_t> buckets = request.count("buckets", 1, kMaxBuckets, kDefaultBuckets);
  const AllocationTable* table = request.table();
  if (request.failed()) return request.failure();
  const auto& [dump, set, id, w] = *site;
  const ViewDump& d = *dump;

  const GrowthGrid grid = GrowthGrid::over(w.from_ns, w.to_ns, *buckets);
  const std::vector<std::uint32_t> members = set.members(id);
  const LiveSeries s = site_live_series(*table, members, grid);
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
