// The steps of request_resolver.h over view_params.h's and view_sites.h's
// checks: each runs only while no earlier step has failed.
#include "server/request_resolver.h"

namespace memrec::analyzer::server {

void Resolver::refuse(int status, std::string message) {
  if (!failed()) error_ = ApiError{status, std::move(message)};
}

const ViewDump* Resolver::dump(const std::string& id) {
  if (failed()) return nullptr;
  dump_ = take(find_dump(*data_, id)).value_or(nullptr);
  return dump_;
}

std::optional<TimeWindow> Resolver::range() {
  if (failed()) return std::nullopt;
  return take(range_param(*dump_, param_));
}

std::optional<std::uint64_t> Resolver::time(const std::string& name) {
  if (failed()) return std::nullopt;
  return take(time_param(*dump_, param_, name)).value_or(std::nullopt);
}

std::optional<std::uint64_t> Resolver::count(const std::string& name, std::uint64_t min, std::uint64_t max,
                                             std::uint64_t fallback) {
  if (failed()) return std::nullopt;
  return take(count_param(param_, name, min, max, fallback));
}

std::optional<SiteSet> Resolver::sites() {
  if (failed()) return std::nullopt;
  return take(site_set_of(*dump_, param_));
}

std::optional<SiteRequest> Resolver::site(const std::string& dump_id, const std::string& site_id) {
  const ViewDump* found = dump(dump_id);
  std::optional<SiteSet> set = sites();
  if (failed()) return std::nullopt;
  const std::optional<std::uint64_t> n = site_id.size() > 9 ? std::nullopt : parse_count(site_id, ~0ull);
  if (site_id.size() > 9) {
    refuse(400, "The site id is too long.");
  } else if (!n) {
    refuse(400, "The site id must be a number.");
  } else if (*n >= set->sites->sites.size()) {
    refuse(404, "No call site has id " + site_id + ".");
  }
  const std::optional<TimeWindow> window = range();
  if (failed()) return std::nullopt;
  return SiteRequest{found, std::move(*set), static_cast<std::uint32_t>(*n), *window};
}

std::shared_ptr<const RangeFigures> Resolver::figures(const std::optional<TimeWindow>& window) {
  if (failed() || !window) return nullptr;
  return take(figures_of(*dump_, *window)).value_or(nullptr);
}

const AllocationTable* Resolver::table() {
  if (failed()) return nullptr;
  return take(table_of(*dump_)).value_or(nullptr);
}

}  // namespace memrec::analyzer::server
