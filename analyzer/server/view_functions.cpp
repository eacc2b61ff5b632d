// /functions: the functions of a dump's call sites with their self and
// inclusive values of a flamegraph metric, and for a selected one its callers
// and callees (reports/caller_callee.h), from the values /flame adds up.
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "reports/caller_callee.h"
#include "reports/site_label.h"
#include "server/request_resolver.h"
#include "server/view_params.h"
#include "server/view_sites.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultLimit = 100;
constexpr std::uint64_t kMaxLimit = 1000;

std::string key_text(std::uint64_t key) { return fmt::format("{:016x}", key); }

// ?key=: 16 lowercase hex digits.
std::optional<std::uint64_t> parse_key(std::string_view text) {
  if (text.size() != 16) return std::nullopt;
  std::uint64_t key = 0;
  for (const char c : text) {
    const auto digit = std::string_view("0123456789abcdef").find(c);
    if (digit == std::string_view::npos) return std::nullopt;
    key = key << 4 | digit;
  }
  return key;
}

json function_json(const CallerCallee& g, std::uint32_t label) {
  const CallerCallee::Function& f = g.function(label);
  json row = {{"name", g.name(label)},
              {"key", key_text(name_key(g.name(label)))},
              {"self", f.self},
              {"inclusive", f.inclusive},
              {"self_sites", f.self_sites},
              {"inclusive_sites", f.inclusive_sites}};
  put_short_name(row, g.name(label));
  return row;
}

json links_json(const CallerCallee& g, const std::vector<CallerCallee::Link>& links) {
  json out = json::array();
  for (const CallerCallee::Link& l : links) {
    json row = {{"name", g.name(l.label)},
                {"key", key_text(name_key(g.name(l.label)))},
                {"value", l.value},
                {"sites", l.sites}};
    put_short_name(row, g.name(l.label));
    out.push_back(std::move(row));
  }
  return out;
}

}  // namespace

ApiAnswer api_functions(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  Resolver request(data, param);
  const ViewDump* found = request.dump(dump_id);
  if (request.failed()) return request.failure();
  const ViewDump& d = *found;
  const std::optional<MetricValues> got = request.take(metric_values(d, param));
  const std::optional<std::uint64_t> limit = request.count("limit", 1, kMaxLimit, kDefaultLimit);
  if (request.failed()) return request.failure();
  const MetricValues& m = *got;
  const std::string search = param("search").value_or("");
  const std::optional<std::string> name = param("name");
  if (name && name->empty()) return fail(400, "name must name a function (a frame's name as /flame gives it).");
  std::optional<std::uint64_t> key;
  if (const auto text = param("key")) {
    key = parse_key(*text);
    if (!key) return fail(400, "key must be 16 lowercase hex digits (a function's key from /functions).");
    if (name) return fail(400, "Give name or key, not both.");
  }

  const CallSites& cs = *m.set.sites;
  CallerCallee graph(name.value_or(""), key);
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < cs.sites.size(); ++i) {
    if (m.values[i] == 0) continue;
    graph.add(cs, cs.sites[i], m.values[i]);
    total += m.values[i];
  }
  std::vector<std::uint32_t> order;
  for (std::uint32_t l = 0; l < graph.size(); ++l) {
    if (graph.name(l).find(search) != std::string::npos) order.push_back(l);
  }
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const auto& fa = graph.function(a);
    const auto& fb = graph.function(b);
    if (fa.inclusive != fb.inclusive) return fa.inclusive > fb.inclusive;
    if (fa.self != fb.self) return fa.self > fb.self;
    return graph.name(a) < graph.name(b);
  });
  json rows = json::array();
  for (std::size_t k = 0; k < order.size() && k < *limit; ++k) {
    rows.push_back(function_json(graph, order[k]));
  }
  json body = {{"metric", m.metric},
               {"total", total},
               {"matched", order.size()},
               {"functions", std::move(rows)},
               {"range", range_json(d, m.window)}};
  if (m.at_ns) body["at_ns"] = *m.at_ns - d.start_ns();
  if (name || key) {
    // A function with no site in this metric and range is there with zeros,
    // so that changing the metric keeps the selection (by key, nameless).
    json selected = graph.selected() ? function_json(graph, *graph.selected())
                                     : json{{"name", name ? json(*name) : json(nullptr)},
                                            {"key", key_text(key.value_or(name_key(name.value_or(""))))},
                                            {"self", 0},
                                            {"inclusive", 0},
                                            {"self_sites", 0},
                                            {"inclusive_sites", 0}};
    if (!graph.selected() && name) put_short_name(selected, *name);
    selected["callers"] = links_json(graph, graph.callers());
    selected["callees"] = links_json(graph, graph.callees());
    body["selected"] = std::move(selected);
  }
  return ok(std::move(body));
}

}  // namespace memrec::analyzer::server
