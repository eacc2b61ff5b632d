// The raw and grouped namings copy the report's sites once (use_raw_frames
// and group_by_label work on a CallSites of their own); figures are not
// copied but summed per request from the report's, which the range cache
// already holds per report site.
#include "server/view_sites.h"

#include <string>

#include "reports/report_output.h"
#include "reports/site_label.h"
#include "server/request_resolver.h"
#include "server/view_params.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

enum Variant : std::size_t { kRaw = 0, kGrouped = 1, kRawGrouped = 2 };

void add(SiteFigures& to, const SiteFigures& f) {
  to.allocations += f.allocations;
  to.allocated_bytes += f.allocated_bytes;
  to.temporary += f.temporary;
  to.leaked_bytes += f.leaked_bytes;
  to.leaked_count += f.leaked_count;
  to.peak_bytes += f.peak_bytes;  // each member's live bytes at the one global peak: they add up
}

std::unique_ptr<const BuiltSites> build_raw(const CallSites& labelled) {
  auto out = std::make_unique<BuiltSites>();
  out->sites = labelled;
  use_raw_frames(out->sites);
  out->labels = site_label_texts(out->sites);
  return out;
}

std::unique_ptr<const BuiltSites> build_grouped(const CallSites& from) {
  auto out = std::make_unique<BuiltSites>();
  SiteGrouping g;
  out->sites = group_by_label(from, &g.group_of_site);
  g.members.resize(out->sites.sites.size());
  for (std::uint32_t s = 0; s < g.group_of_site.size(); ++s) g.members[g.group_of_site[s]].push_back(s);
  out->grouping = std::move(g);
  out->labels = site_label_texts(out->sites);
  return out;
}

const BuiltSites& built(const ViewDump& d, Variant v) {
  SiteVariants& vs = *d.variants;
  std::call_once(vs.once[v], [&] {
    if (v == kRaw) {
      vs.built[v] = build_raw(d.report.sites);
    } else {
      vs.built[v] = build_grouped(v == kGrouped ? d.report.sites : built(d, kRaw).sites);
    }
  });
  return *vs.built[v];
}

}  // namespace

Checked<SiteOptions> site_options(const ParamFn& param) {
  SiteOptions o;
  if (const auto raw = param("raw")) {
    if (*raw != "0" && *raw != "1") return ApiError{400, "raw must be 0 or 1."};
    o.raw = *raw == "1";
  }
  if (const auto group = param("group")) {
    if (*group != "label" && *group != "none") return ApiError{400, "group must be label or none."};
    o.group = *group == "label";
  }
  return o;
}

std::vector<std::uint32_t> SiteSet::members(std::uint32_t id) const {
  if (grouping != nullptr) return grouping->members[id];
  return {id};
}

SiteSet site_set(const ViewDump& d, SiteOptions o) {
  if (!o.raw && !o.group) return SiteSet{&d.report.sites, &d.site_label, nullptr};
  const BuiltSites& b = built(d, !o.group ? kRaw : o.raw ? kRawGrouped : kGrouped);
  return SiteSet{&b.sites, &b.labels, b.grouping ? &*b.grouping : nullptr};
}

Checked<SiteSet> site_set_of(const ViewDump& d, const ParamFn& param) {
  const auto o = site_options(param);
  if (const auto* e = std::get_if<ApiError>(&o)) return *e;
  return site_set(d, std::get<SiteOptions>(o));
}

Checked<SiteRequest> site_request(const ViewData& data, const std::string& dump_id, const std::string& site_id,
                                  const ParamFn& param) {
  Resolver request(data, param);
  std::optional<SiteRequest> site = request.site(dump_id, site_id);
  if (request.failed()) return request.error();
  return std::move(*site);
}

const std::vector<SiteFigures>& set_figures(const SiteSet& set, const std::vector<SiteFigures>& per_site,
                                            std::vector<SiteFigures>& sums) {
  if (set.grouping == nullptr) return per_site;
  sums.assign(set.sites->sites.size(), SiteFigures{});
  const auto& group_of = set.grouping->group_of_site;
  for (std::size_t s = 0; s < per_site.size() && s < group_of.size(); ++s) add(sums[group_of[s]], per_site[s]);
  return sums;
}

SiteFigures site_figures(const SiteSet& set, std::uint32_t id, const std::vector<SiteFigures>& per_site) {
  SiteFigures out;
  for (const std::uint32_t s : set.members(id)) {
    if (s < per_site.size()) add(out, per_site[s]);
  }
  return out;
}

SiteLive set_live(const SiteSet& set, SiteLive per_site) {
  if (set.grouping == nullptr) return per_site;
  SiteLive out;
  out.bytes.assign(set.sites->sites.size(), 0);
  out.count.assign(set.sites->sites.size(), 0);
  const auto& group_of = set.grouping->group_of_site;
  for (std::size_t s = 0; s < per_site.bytes.size() && s < group_of.size(); ++s) {
    out.bytes[group_of[s]] += per_site.bytes[s];
    out.count[group_of[s]] += per_site.count[s];
  }
  return out;
}

std::vector<GrowthFit> set_growth(const AllocationTable& t, const SiteSet& set, const GrowthGrid& grid) {
  if (set.grouping == nullptr) return fit_every_site(t, grid);
  std::vector<GrowthFit> out(set.sites->sites.size());
  for (std::uint32_t g = 0; g < out.size(); ++g) {
    const GrowthSeries sum = summed_growth_series(t, set.grouping->members[g], grid);
    if (!sum.bytes.empty()) out[g] = fit_growth(sum, grid);
  }
  return out;
}

GrowthGrid growth_grid(const TimeWindow& w) {
  return GrowthGrid::over(w.from_ns + (w.to_ns - w.from_ns) / 10, w.to_ns, kGrowthBuckets);
}

std::vector<std::uint64_t> set_sparklines(const AllocationTable& t, const SiteSet& set,
                                          const std::vector<std::uint32_t>& page, const TimeWindow& w,
                                          std::uint32_t n) {
  if (set.grouping == nullptr) return site_sparklines(t, page, w, n);
  std::vector<std::uint32_t> rows;  // every member of the page's groups, and which row of `page` it adds to
  std::vector<std::size_t> into;
  for (std::size_t p = 0; p < page.size(); ++p) {
    for (const std::uint32_t s : set.grouping->members[page[p]]) {
      rows.push_back(s);
      into.push_back(p);
    }
  }
  const std::vector<std::uint64_t> each = site_sparklines(t, rows, w, n);
  std::vector<std::uint64_t> out(page.size() * n, 0);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::uint32_t j = 0; j < n; ++j) out[into[r] * n + j] += each[r * n + j];
  }
  return out;
}

void put_site_label(json& row, const CallSites& cs, const CallSite& s) {
  if (s.frames.empty()) {
    for (const char* key : {"top", "label", "label_full", "via", "label_frame"}) row[key] = nullptr;
    return;
  }
  const SiteLabel l = site_label(cs, s);
  const SiteFrame& f = cs.frames[s.frames[l.frame]];
  row["top"] = frame_json(f);
  row["label"] = l.text;
  row["label_full"] = frame_label(f);
  row["via"] = l.via.empty() ? json(nullptr) : json(l.via);
  row["label_frame"] = l.frame;
}

json frames_json(const CallSites& cs, const SiteFrames& frames, std::uint32_t label_at) {
  json out = json::array();
  std::uint32_t at = 0;
  for (const std::uint32_t f : frames) {
    json frame = frame_json(cs.frames[f]);
    frame["folded"] = at++ < label_at;
    // Outside the fold too: the runtime's frames around the program's own
    // (thread start, main's callers), which the page dims.
    frame["library"] = is_library_frame(cs.frames[f]);
    out.push_back(std::move(frame));
  }
  return out;
}

void put_short_name(json& node, const std::string& name) {
  std::string label = short_function(name);
  if (label != name) node["label"] = std::move(label);
}

}  // namespace memrec::analyzer::server
