// /allocations: the rows of the allocation table that pass every filter,
// sorted and paged on the server. This file reads the parameters and writes
// the rows; the selection (model/allocation_pages.h) scans
// the range's rows (or one site's, or the realloc chains') on two threads
// without copying them.
#include <algorithm>
#include <string_view>
#include <variant>

#include "model/allocation_filter.h"
#include "reports/report_output.h"
#include "reports/site_match.h"
#include "server/request_resolver.h"
#include "server/view_api.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultLimit = 100;
constexpr std::uint64_t kMaxLimit = 1000;
constexpr std::size_t kMaxChain = 10000;

// `site` and the label are the set's: a grouped row names its group.
json row_json(const ViewDump& d, const SiteSet& set, std::uint32_t r) {
  const AllocationTable& t = *d.table();  // the handlers checked table_of()
  const std::uint64_t start = d.start_ns();
  const std::uint64_t free = t.free_ns(r);
  const bool freed = free != kNeverFreed;
  const std::uint32_t th = t.thread(r);
  const auto& threads = d.report.dump.threads;
  const std::string* name = th < threads.size() && !threads[th].name.empty() ? &threads[th].name : nullptr;
  const std::uint32_t s = t.site(r);
  const auto from = t.realloc_from(r);
  const auto to = t.realloc_to(r);
  json row = {{"index", r},
              {"time_ns", t.alloc_ns(r) - std::min(t.alloc_ns(r), start)},
              {"free_ns", freed ? json(free - std::min(free, start)) : json(nullptr)},
              {"lifetime_ns", freed ? json(free - t.alloc_ns(r)) : json(nullptr)},
              {"size", t.size(r)},
              {"address", t.address(r)},
              {"thread", th},
              {"thread_name", name != nullptr ? json(*name) : json(nullptr)},
              {"site", s != kNoSite ? json(set.of(s)) : json(nullptr)},
              {"realloc_from", from ? json(*from) : json(nullptr)},
              {"realloc_to", to ? json(*to) : json(nullptr)}};
  if (s != kNoSite) {
    put_site_label(row, *set.sites, set.sites->sites[set.of(s)]);
  } else {
    put_site_label(row, *set.sites, CallSite{});
  }
  return row;
}

std::optional<ApiError> read_filter(const ViewDump& d, const SiteSet& set, const ParamFn& param, RowFilter& f) {
  const AllocationTable& t = *d.table();  // the handlers checked table_of()
  Resolver request(d, param);
  const std::optional<TimeWindow> range = request.range();
  if (request.failed()) return request.error();
  const TimeWindow& w = *range;
  f.lo = w.from_ns == 0 ? 0 : rows_until(t, w.from_ns - 1);
  f.hi = rows_until(t, w.to_ns);
  AllocationFilter& rows = f.rows;
  rows.alive_at_ns = request.time("alive_at");
  if (request.failed()) return request.error();
  for (const char* name : {"leaked", "realloc", "kept"}) {
    if (const auto v = param(name)) {
      if (*v != "0" && *v != "1") return ApiError{400, std::string(name) + " must be 0 or 1."};
    }
  }
  if (param("leaked") == "1") rows.live_after_ns = w.to_ns;
  // Kept: allocated in the range and live at alive_at, or at the range's end,
  // as report --retained FROM..TO --at AT counts them.
  if (param("kept") == "1") {
    rows.alive_at_ns = rows.alive_at_ns.value_or(w.to_ns);
    if (*rows.alive_at_ns < w.from_ns) {
      return ApiError{400,
                      "kept=1 needs alive_at at or after the range's start: nothing allocated in the range is "
                      "live before it."};
    }
  }
  f.realloc = param("realloc") == "1";
  const std::pair<const char*, std::uint64_t*> bounds[] = {{"min_size", &rows.min_size},
                                                           {"max_size", &rows.max_size},
                                                           {"min_life_ns", &rows.min_life_ns},
                                                           {"max_life_ns", &rows.max_life_ns}};
  for (const auto& [name, into] : bounds) {
    const std::optional<std::uint64_t> v = request.count(name, 0, ~0ull, *into);
    if (request.failed()) return request.error();
    *into = *v;
  }
  if (param("thread")) {
    const std::size_t n = d.report.dump.threads.size();
    const auto v = count_param(param, "thread", 0, n == 0 ? 0 : n - 1, 0);
    if (n == 0 || std::holds_alternative<ApiError>(v)) {
      return ApiError{400,
                      "thread must be a thread index from /threads (0 to " + std::to_string(n == 0 ? 0 : n - 1) + ")."};
    }
    rows.thread = static_cast<std::uint32_t>(std::get<std::uint64_t>(v));
  }
  const std::size_t sites = set.sites->sites.size();
  if (param("site")) {
    const auto v = count_param(param, "site", 0, sites == 0 ? 0 : sites - 1, 0);
    if (sites == 0 || std::holds_alternative<ApiError>(v)) return ApiError{400, "site must be a call site id."};
    const std::vector<std::uint32_t> members = set.members(static_cast<std::uint32_t>(std::get<std::uint64_t>(v)));
    if (members.size() == 1) {
      f.site = members[0];  // the fast path: that site's rows only
    } else {
      std::vector<bool> keep(d.report.sites.sites.size());
      for (const std::uint32_t m : members) keep[m] = true;
      keep_sites(rows, keep);
    }
  }
  if (const auto pattern = param("match")) {
    const auto re = compile_match(*pattern);
    if (!re) return ApiError{400, "match is " + re.error().message + "."};
    keep_sites(rows, sites_matching(d.report.sites, *re));
  }
  return std::nullopt;
}

}  // namespace

ApiAnswer api_allocations(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const AllocationTable* table = request.table();
  const std::optional<SiteSet> found_set = request.sites();
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const SiteSet& set = *found_set;
  RowFilter f;
  if (const auto e = read_filter(d, set, param, f)) return fail(*e);
  const std::string sort_name = param("sort").value_or("time");
  RowSort sort = RowSort::kTime;
  if (sort_name == "size") {
    sort = RowSort::kSize;
  } else if (sort_name == "lifetime") {
    sort = RowSort::kLifetime;
  } else if (sort_name == "address") {
    sort = RowSort::kAddress;
  } else if (sort_name != "time") {
    return fail(400, "Unknown sort '" + sort_name.substr(0, 40) + "': use one of time, size, lifetime, address.");
  }
  const std::string order = param("order").value_or("asc");
  if (order != "asc" && order != "desc") return fail(400, "order must be asc or desc.");
  const bool desc = order == "desc";
  const std::optional<std::uint64_t> offset_v = request.count("offset", 0, 1ull << 32, 0);
  const std::optional<std::uint64_t> limit_v = request.count("limit", 1, kMaxLimit, kDefaultLimit);
  if (request.failed()) return request.failure();
  const std::uint64_t offset = *offset_v;
  const std::uint64_t limit = *limit_v;

  const RowPage page = allocation_page(*table, f, sort, desc, offset, limit);
  json rows = json::array();
  for (const std::uint32_t r : page.rows) rows.push_back(row_json(d, set, r));
  json body = {{"total", page.total}, {"offset", offset}, {"limit", limit}, {"rows", std::move(rows)}};
  if (param("kept") == "1") {
    // The range's figures before the other filters: what report --retained prints.
    const TimeWindow w = std::get<TimeWindow>(range_param(d, param));
    const std::uint64_t at = *f.rows.alive_at_ns;
    body["kept"] = kept_json(d, w, at, retained(*table, w.from_ns, w.to_ns, at));
  }
  return ok(std::move(body));
}

ApiAnswer api_allocation(const ViewData& data, const std::string& dump_id, const std::string& index,
                         const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  const std::optional<SiteOptions> options = request.take(site_options(param));
  const AllocationTable* table = request.table();
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const SiteSet set = site_set(d, *options);
  // The block's own stack: its report site's, folded as the set folds it.
  const SiteSet own = site_set(d, SiteOptions{options->raw, false});
  const AllocationTable& t = *table;
  if (index.size() > 10) return fail(400, "The allocation index is too long.");
  const auto n = parse_count(index, ~0ull);
  if (!n) return fail(400, "The allocation index must be a number.");
  if (*n >= t.rows()) return fail(404, "No allocation has index " + index + ".");
  const auto r = static_cast<std::uint32_t>(*n);
  json body = row_json(d, set, r);
  const std::uint32_t s = t.site(r);
  if (s != kNoSite) {
    const CallSite& site = own.sites->sites[s];
    body["frames"] = frames_json(*own.sites, site.frames, site.label_frame);
  } else {
    body["frames"] = json::array();
  }
  // The chain: back to the block the first realloc started from, then forward.
  std::uint32_t head = r;
  for (std::size_t i = 0; i < kMaxChain; ++i) {
    const auto from = t.realloc_from(head);
    if (!from) break;
    head = *from;
  }
  json chain = json::array();
  std::optional<std::uint32_t> at = head;
  for (std::size_t i = 0; at && i < kMaxChain; ++i) {
    chain.push_back(row_json(d, set, *at));
    at = t.realloc_to(*at);
  }
  body["chain"] = std::move(chain);
  return ok(std::move(body));
}

}  // namespace memrec::analyzer::server
