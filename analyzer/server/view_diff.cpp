// /diff/flame and /diff/sites: two dumps (or two ranges of one) compared
// with the figures the other views show, a range's from the range cache
// (view_model.h). The table's comparison is `memrec diff`'s own
// (diff/site_diff.h), fed those figures instead of a reloaded report, so its
// rows equal `memrec diff --json`'s for the same ranges (the tests compare).
#include "server/view_diff.h"

#include <algorithm>
#include <limits>

#include "diff/site_diff.h"
#include "reports/flame_tree.h"
#include "server/request_resolver.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultRows = 100;
constexpr std::uint64_t kMaxRows = 5000;

Checked<DiffSideRequest> side_request(const ViewData& data, const ParamFn& param, const char* name) {
  const auto id = param(name);
  Resolver request(data, param);
  const ViewDump* found = request.dump(*id);
  const std::string from_name = std::string(name) + "_from";
  const std::string to_name = std::string(name) + "_to";
  const std::optional<std::uint64_t> from_abs = request.time(from_name);
  const std::optional<std::uint64_t> to_abs = request.time(to_name);
  if (request.failed()) return request.error();
  DiffSideRequest side;
  side.dump = found;
  side.id = std::stoull(*id);
  const ViewDump& d = *side.dump;
  if (from_abs) side.from_ns = *from_abs - d.start_ns();
  if (to_abs) side.to_ns = *to_abs - d.start_ns();
  side.window.from_ns = from_abs.value_or(d.start_ns());
  side.window.to_ns = to_abs.value_or(std::max(d.end_ns(), side.window.from_ns));
  if (side.window.from_ns > side.window.to_ns) {
    return ApiError{400, from_name + " (" + std::to_string(*side.from_ns) + " ns) is after " + to_name + " (" +
                             std::to_string(side.to_ns.value_or(0)) + " ns): a range must not end before it starts."};
  }
  return side;
}

using DiffTree = FlameTree<2>;  // value[0] the base, value[1] the new dump

// A site's value is its figure as the table compares it (a runtime site leaks nothing).
void add_sites(DiffTree& tree, const CallSites& cs, const std::vector<SiteFigures>& figures,
               std::uint64_t DiffFigures::*field, std::size_t slot) {
  for (std::size_t i = 0; i < cs.sites.size() && i < figures.size(); ++i) {
    const std::uint64_t v = diff_figures(figures[i], cs.sites[i].runtime).*field;
    if (v != 0) tree.add(cs, cs.sites[i], v, slot);
  }
}

json diff_json(const DiffTree& tree, std::uint32_t at, std::uint64_t min_value, std::uint64_t& pruned) {
  json children = json::array();
  for (const std::uint32_t child : tree.children(at)) {
    if (std::max(tree.node(child).value[0], tree.node(child).value[1]) < min_value) {
      ++pruned;
      continue;
    }
    children.push_back(diff_json(tree, child, min_value, pruned));
  }
  const DiffTree::Node& n = tree.node(at);
  json node = {{"name", tree.name(at)}, {"base", n.value[0]}, {"new", n.value[1]}, {"children", std::move(children)}};
  put_short_name(node, tree.name(at));
  return node;
}

// The metrics of the diff flamegraph (/flame's, without live), as the table's figures.
std::optional<std::uint64_t DiffFigures::*> metric_field(std::string_view metric) {
  return metric == "leaked-count" ? std::nullopt : diff_field(metric);
}

ApiError unknown_metric(const std::string& metric) {
  return {400,
          "Unknown metric '" + metric.substr(0, 40) + "': use one of leaked, peak, allocated, allocations, temporary."};
}

// What both endpoints start from: the request, the metric, each side's sites
// (as ?raw names them; ?group=label changes neither: a diff matches sites by
// their frames) and figures over its range.
struct Sides {
  DiffRequest request;
  std::string metric;
  SiteSet base_set;
  SiteSet next_set;
  std::shared_ptr<const RangeFigures> base_figures;
  std::shared_ptr<const RangeFigures> next_figures;
};

Checked<Sides> sides_of(const ViewData& data, const ParamFn& param, std::string_view endpoint) {
  Resolver request(data, param);
  std::optional<DiffRequest> found = request.take(diff_request(data, param, endpoint));
  if (request.failed()) return request.error();
  Sides s;
  s.request = std::move(*found);
  s.metric = param("metric").value_or("leaked");
  if (!metric_field(s.metric)) return unknown_metric(s.metric);
  const std::optional<SiteOptions> options = request.take(site_options(param));
  if (request.failed()) return request.error();
  const SiteOptions naming{options->raw, false};
  s.base_set = site_set(*s.request.base.dump, naming);
  s.next_set = site_set(*s.request.next.dump, naming);
  s.base_figures = request.take(figures_of(*s.request.base.dump, s.request.base.window)).value_or(nullptr);
  if (request.failed()) return request.error();
  s.next_figures = request.take(figures_of(*s.request.next.dump, s.request.next.window)).value_or(nullptr);
  if (request.failed()) return request.error();
  return s;
}

DiffSide side_of(const SiteSet& set, const RangeFigures& f) {
  DiffSide side;
  side.sites = set.sites;
  const auto& sites = set.sites->sites;
  side.figures.reserve(sites.size());
  for (std::size_t i = 0; i < sites.size() && i < f.sites.size(); ++i) {
    side.figures.push_back(diff_figures(f.sites[i], sites[i].runtime));
  }
  side.totals = {f.totals.peak_bytes,      f.leaked_bytes,       f.leaked_count,
                 f.totals.allocated_bytes, f.totals.allocations, f.totals.temporary};
  return side;
}

json head_json(const Sides& s) {
  return {{"metric", s.metric},
          {"base", s.request.base.id},
          {"new", s.request.next.id},
          {"base_range", side_range_json(s.request.base)},
          {"new_range", side_range_json(s.request.next)}};
}

// The table's orders: the largest change either way, the largest growth
// first, the largest relative growth first (a new site's is unbounded).
enum class RowOrder { kMagnitude, kDelta, kPercent };

std::optional<RowOrder> row_order(std::string_view name) {
  if (name == "magnitude") return RowOrder::kMagnitude;
  if (name == "delta") return RowOrder::kDelta;
  if (name == "percent") return RowOrder::kPercent;
  return std::nullopt;
}

double percent_of(std::uint64_t base, std::uint64_t next) {
  if (base == 0) return std::numeric_limits<double>::infinity();
  return (static_cast<double>(next) - static_cast<double>(base)) * 100.0 / static_cast<double>(base);
}

const char* status_name(SiteChange c) {
  if (c == SiteChange::kNew) return "new";
  if (c == SiteChange::kVanished) return "vanished";
  return "changed";
}

json row_json(const Sides& s, const SiteDiff& site, std::uint64_t DiffFigures::*field) {
  const std::uint64_t b = site.base.*field;
  const std::uint64_t n = site.next.*field;
  json row = {{"status", status_name(site.change)},
              {"runtime", site.runtime},
              {"base_site", site.base_site ? json(*site.base_site) : json(nullptr)},
              {"new_site", site.next_site ? json(*site.next_site) : json(nullptr)},
              {"base", b},
              {"new", n},
              {"change", change_of(b, n)},
              {"percent", b == 0 ? json(nullptr) : json(percent_of(b, n))}};
  // Named as the call-sites view names it, by the new dump's site (the base's when it vanished).
  const SiteSet& set = site.next_site ? s.next_set : s.base_set;
  put_site_label(row, *set.sites, set.sites->sites[site.next_site ? *site.next_site : *site.base_site]);
  return row;
}

}  // namespace

Checked<DiffRequest> diff_request(const ViewData& data, const ParamFn& param, std::string_view endpoint) {
  if (!param("base") || !param("new")) {
    return ApiError{400, std::string(endpoint) +
                             " needs base=ID and new=ID (dump ids from /api/dumps; the same id twice compares two "
                             "ranges of one dump)."};
  }
  Resolver request(data, param);
  const std::optional<DiffSideRequest> base = request.take(side_request(data, param, "base"));
  if (request.failed()) return request.error();
  const std::optional<DiffSideRequest> next = request.take(side_request(data, param, "new"));
  if (request.failed()) return request.error();
  return DiffRequest{*base, *next};
}

json side_range_json(const DiffSideRequest& side) {
  return {{"from_ns", side.from_ns.value_or(0)}, {"to_ns", side.to_ns ? json(*side.to_ns) : json(nullptr)}};
}

ApiAnswer api_diff_flame(const ViewData& data, const ParamFn& param) {
  Resolver request(data, param);
  const std::optional<Sides> found = request.take(sides_of(data, param, "diff/flame"));
  if (request.failed()) return request.failure();
  const Sides& s = *found;
  DiffTree tree;
  const auto field = *metric_field(s.metric);
  add_sites(tree, *s.base_set.sites, s.base_figures->sites, field, 0);
  add_sites(tree, *s.next_set.sites, s.next_figures->sites, field, 1);
  tree.sort_children();
  const auto& root_node = tree.node(0);
  std::uint64_t pruned = 0;
  json root = diff_json(tree, 0, std::max(root_node.value[0], root_node.value[1]) / 2000, pruned);
  json body = head_json(s);
  body["base_total"] = root_node.value[0];
  body["new_total"] = root_node.value[1];
  body["pruned"] = pruned;
  body["root"] = std::move(root);
  return ok(std::move(body));
}

ApiAnswer api_diff_sites(const ViewData& data, const ParamFn& param) {
  Resolver request(data, param);
  const std::optional<Sides> found = request.take(sides_of(data, param, "diff/sites"));
  if (request.failed()) return request.failure();
  const Sides& s = *found;
  const std::string sort = param("sort").value_or("magnitude");
  const auto order = row_order(sort);
  if (!order) return fail(400, "Unknown sort '" + sort.substr(0, 40) + "': use one of magnitude, delta, percent.");
  const std::optional<std::uint64_t> limit = request.count("limit", 1, kMaxRows, kDefaultRows);
  if (request.failed()) return request.failure();
  const auto field = *metric_field(s.metric);

  const HeapDiff d = diff_sides(side_of(s.base_set, *s.base_figures), side_of(s.next_set, *s.next_figures));
  std::vector<const SiteDiff*> rows;
  for (const SiteDiff& site : d.sites) {
    if (site.base.*field != site.next.*field) rows.push_back(&site);
  }
  // Stable: equal keys keep the diff's own order (its largest change of leaked, peak, allocated first).
  std::stable_sort(rows.begin(), rows.end(), [&](const SiteDiff* x, const SiteDiff* y) {
    const std::uint64_t bx = x->base.*field, nx = x->next.*field, by = y->base.*field, ny = y->next.*field;
    switch (*order) {
      case RowOrder::kMagnitude:
        return (bx > nx ? bx - nx : nx - bx) > (by > ny ? by - ny : ny - by);
      case RowOrder::kDelta:
        return change_of(bx, nx) > change_of(by, ny);
      case RowOrder::kPercent:
        return percent_of(bx, nx) > percent_of(by, ny);
    }
    return false;
  });
  json out = json::array();
  const std::uint64_t shown = std::min<std::uint64_t>(rows.size(), *limit);
  for (std::uint64_t i = 0; i < shown; ++i) out.push_back(row_json(s, *rows[i], field));
  json body = head_json(s);
  body["sort"] = sort;
  body["totals"] = {{"base", d.base_totals.*field},
                    {"new", d.next_totals.*field},
                    {"change", change_of(d.base_totals.*field, d.next_totals.*field)}};
  body["total"] = rows.size();
  body["sites"] = std::move(out);
  return ok(std::move(body));
}

}  // namespace memrec::analyzer::server
