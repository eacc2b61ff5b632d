// How a request names the dump's call sites (docs/api.md "Labels"): by their
// innermost frame of the program's own code (the default), by their innermost
// frame whatever it is (?raw=1), merged by the label's line (?group=label).
// Range figures stay per report site (view_model.h); a grouped set sums them
// here. Used by every handler that lists, ranks or describes sites.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/site_growth.h"
#include "server/view_api.h"

namespace memrec::analyzer::server {

struct SiteOptions {
  bool raw = false;    // ?raw=1
  bool group = false;  // ?group=label
};

// ?raw=0|1 and ?group=label|none; anything else is a 400.
Checked<SiteOptions> site_options(const ParamFn& param);

// The dump's sites as `site_set()` names them. Ids are positions in
// `sites->sites`: report site ids, or group ids when grouped.
struct SiteSet {
  const CallSites* sites = nullptr;
  const std::vector<std::string>* labels = nullptr;  // per site: its label text (ties in rankings)
  const SiteGrouping* grouping = nullptr;            // null unless grouped

  // The id in this set of report site `s`.
  std::uint32_t of(std::uint32_t s) const { return grouping != nullptr ? grouping->group_of_site[s] : s; }
  // The report sites of set site `id`.
  std::vector<std::uint32_t> members(std::uint32_t id) const;
};

// The default set is the report's; the others are built on first use (thread-safe) and kept.
SiteSet site_set(const ViewDump& dump, SiteOptions options);
// The set a request's ?raw&group ask for, or why not.
Checked<SiteSet> site_set_of(const ViewDump& dump, const ParamFn& param);

// A request about one site (/sites/{site} and its series): its dump, the
// naming ?raw&group ask for, the site's id in it (400 if not a number, 404 if
// no such site) and ?from&to, each checked.
struct SiteRequest {
  const ViewDump* dump = nullptr;
  SiteSet set;
  std::uint32_t id = 0;
  TimeWindow window;
};
// (request_resolver.h's Resolver::site, for a caller without a Resolver.)
Checked<SiteRequest> site_request(const ViewData& data, const std::string& dump_id, const std::string& site_id,
                                  const ParamFn& param);

// Per-report-site figures (RangeFigures::sites) as the set's: summed by group.
// Ungrouped, that is `per_site` itself (a large dump's figures are not copied per request);
// grouped, the sums, kept in `sums`.
const std::vector<SiteFigures>& set_figures(const SiteSet& set, const std::vector<SiteFigures>& per_site,
                                            std::vector<SiteFigures>& sums);
// The figures of the one set site `id`.
SiteFigures site_figures(const SiteSet& set, std::uint32_t id, const std::vector<SiteFigures>& per_site);
SiteLive set_live(const SiteSet& set, SiteLive per_site);
// site_sparklines() of set sites `page`: a group's is the sum of its members'.
// Each site's (or group's: its members' series summed) growth fit over `grid`
// (model/site_growth.h), by the set's ids.
std::vector<GrowthFit> set_growth(const AllocationTable& table, const SiteSet& set, const GrowthGrid& grid);
// The grid of the sites' Growth sort over `w`: after a warm-up of a tenth of
// it, as `memrec report --growth` fits the same range.
GrowthGrid growth_grid(const TimeWindow& w);

std::vector<std::uint64_t> set_sparklines(const AllocationTable& table, const SiteSet& set,
                                          const std::vector<std::uint32_t>& page, const TimeWindow& window,
                                          std::uint32_t n);

// `top` (the label frame, FRAME), `label`, `label_full` (its whole demangled
// function), `via` and `label_frame` of `site` into `row`; nulls without frames.
void put_site_label(nlohmann::json& row, const CallSites& sites, const CallSite& site);

// Frames innermost first, each FRAME with "folded": whether it lies before position `label_at`
// (library code the label stands for).
nlohmann::json frames_json(const CallSites& sites, const SiteFrames& frames, std::uint32_t label_at);

// A flamegraph node's `label`, its name shortened as a site label is
// (site_label.h short_function), when that differs from the name.
void put_short_name(nlohmann::json& node, const std::string& name);

// The value of a flamegraph metric for each site over the request's range:
// ?metric=leaked|peak|allocated|allocations|temporary|live (live: at `at`),
// ?raw, never grouped (a flamegraph's frames merge by name already). What
// /flame and /functions add up.
struct MetricValues {
  std::string metric;
  SiteSet set;
  std::vector<std::uint64_t> values;  // by site of `set`
  TimeWindow window;
  std::optional<std::uint64_t> at_ns;  // absolute, when given
};
Checked<MetricValues> metric_values(const ViewDump& dump, const ParamFn& param);

}  // namespace memrec::analyzer::server
