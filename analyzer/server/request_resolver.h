// One place that turns a request's parameters into what a handler works on:
// its dump, range, instants, counts, call-site naming, figures and table.
// Each step gives its value, or nothing once any step has failed; the first
// failure is kept, so a handler checks once, where it next needs the values:
//
//   Resolver r(data, param);
//   const ViewDump* d = r.dump(dump_id);
//   const std::optional<TimeWindow> w = r.range();
//   const auto figures = r.figures(w);
//   if (r.failed()) return r.failure();
//
// A step never runs after a failure, so a pointer from an earlier step is
// only read by the handler after it has checked failed().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {

class Resolver {
 public:
  Resolver(const ViewData& data, const ParamFn& param) : data_(&data), param_(param) {}
  // For a helper handed its dump: the steps below are about `dump`.
  Resolver(const ViewDump& dump, const ParamFn& param) : param_(param), dump_(&dump) {}

  bool failed() const { return error_.has_value(); }
  // The first failure as the handler's answer; as an ApiError for a helper
  // that returns Checked<T>. Only after failed().
  ApiAnswer failure() const { return fail(*error_); }
  const ApiError& error() const { return *error_; }

  // A value the handler computed itself, or its error.
  template <typename T>
  std::optional<T> take(Checked<T> checked) {
    if (failed()) return std::nullopt;
    if (auto* e = std::get_if<ApiError>(&checked)) {
      error_ = std::move(*e);
      return std::nullopt;
    }
    return std::get<T>(std::move(checked));
  }
  // A refusal of the handler's own, kept like a parameter's.
  void refuse(int status, std::string message);

  // The dump named by the path segment; the steps below are about it.
  const ViewDump* dump(const std::string& id);
  // ?from&to (default: the whole run).
  std::optional<TimeWindow> range();
  // A time parameter as absolute ns: nullopt if absent (or after a failure).
  std::optional<std::uint64_t> time(const std::string& name);
  // A count parameter in [min, max], `fallback` when absent.
  std::optional<std::uint64_t> count(const std::string& name, std::uint64_t min, std::uint64_t max,
                                     std::uint64_t fallback);
  // The call sites as ?raw&group name them.
  std::optional<SiteSet> sites();
  // One site of them (400 if its id is not a number, 404 if there is no such
  // site) and the range: a request about that site.
  std::optional<SiteRequest> site(const std::string& dump_id, const std::string& site_id);
  // The range's figures (null after a failure, or for no range).
  std::shared_ptr<const RangeFigures> figures(const std::optional<TimeWindow>& window);
  // The allocation table: a 503 while it is built.
  const AllocationTable* table();

 private:
  const ViewData* data_ = nullptr;  // null when constructed with the dump
  const ParamFn& param_;
  const ViewDump* dump_ = nullptr;
  std::optional<ApiError> error_;
};

}  // namespace memrec::analyzer::server
