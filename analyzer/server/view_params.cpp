// Times on the wire are ns since the dump's start; the model's are absolute,
// so every time is shifted here once. Sums that could overflow are refused.
#include "server/view_params.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include "reports/report_output.h"

namespace memrec::analyzer::server {
namespace {

constexpr std::size_t kMaxIdDigits = 9;

// A dump given to memrec view that is not served (yet): 503 while it loads,
// as a table being built; 500 with the reason once its load failed.
ApiError load_missing(const DumpLoad& load, const std::string& id) {
  if (load.state() == LoadState::kFailed) {
    return ApiError{500, "Dump " + id + " did not load: " + load.error()};
  }
  const auto percent = static_cast<unsigned>(load.fraction() * 100);
  ApiError e{503, "Dump " + id + " (" + load.path() + ") is still loading (" + std::to_string(percent) +
                      " %): ask again in a few seconds."};
  e.loading_percent = percent;
  return e;
}

}  // namespace

std::optional<std::uint64_t> parse_count(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
  }
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || value > max) return std::nullopt;
  return value;
}

Checked<const ViewDump*> find_dump(const ViewData& data, const std::string& id) {
  if (id.size() > kMaxIdDigits) return ApiError{400, "The dump id is too long."};
  const auto n = parse_count(id, ~0ull);
  if (!n) return ApiError{400, "The dump id must be a number."};
  if (*n >= data.dumps.size()) return ApiError{404, "No dump has id " + id + "."};
  if (!data.ready(*n)) return load_missing(*data.loads[*n], id);
  return &data.dumps[*n];
}

Checked<std::uint64_t> count_param(const ParamFn& param, const std::string& name, std::uint64_t min, std::uint64_t max,
                                   std::uint64_t fallback) {
  const auto text = param(name);
  if (!text) return fallback;
  const auto n = parse_count(*text, max);
  if (!n || *n < min) {
    return ApiError{400,
                    name + " must be a whole number from " + std::to_string(min) + " to " + std::to_string(max) + "."};
  }
  return *n;
}

Checked<std::optional<std::uint64_t>> time_param(const ViewDump& dump, const ParamFn& param, const std::string& name) {
  const auto text = param(name);
  if (!text) return std::optional<std::uint64_t>();
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max() - dump.start_ns();
  const auto n = parse_count(*text, max);
  if (!n) {
    return ApiError{
        400, name + " must be a whole number of ns since the dump's start, at most " + std::to_string(max) + "."};
  }
  return std::optional<std::uint64_t>(dump.start_ns() + *n);
}

Checked<TimeWindow> range_param(const ViewDump& dump, const ParamFn& param) {
  const auto from = time_param(dump, param, "from");
  if (const auto* e = std::get_if<ApiError>(&from)) return *e;
  const auto to = time_param(dump, param, "to");
  if (const auto* e = std::get_if<ApiError>(&to)) return *e;
  TimeWindow w;
  w.from_ns = std::get<0>(from).value_or(dump.start_ns());
  w.to_ns = std::get<0>(to).value_or(std::max(dump.end_ns(), w.from_ns));
  if (w.from_ns > w.to_ns) return ApiError{400, "from must not be after to."};
  return w;
}

ApiError table_missing(const ViewDump& dump) {
  constexpr const char* kNeed =
      "Ranges, instants, sparklines and the allocation list need it; the whole run's figures, timeline, call "
      "sites and flamegraphs do not.";
  if (const std::string* why = dump.slot->failure()) {
    return ApiError{500, "This dump has no allocation table: " + *why + " " + kNeed};
  }
  // Not 100 even if it was published since the caller looked: ask again.
  const unsigned percent = std::min(dump.slot->percent(), 99u);
  return ApiError{
      503, "This dump's allocation table is still being built (" + std::to_string(percent) + " %). " + kNeed, percent};
}

Checked<const AllocationTable*> table_of(const ViewDump& dump) {
  if (const AllocationTable* t = dump.table()) return t;
  return table_missing(dump);
}

Checked<std::shared_ptr<const RangeFigures>> figures_of(const ViewDump& dump, const TimeWindow& w) {
  if (auto figures = range_figures(dump, w)) return figures;
  return table_missing(dump);
}

nlohmann::json range_json(const ViewDump& dump, const TimeWindow& w) {
  return {{"from_ns", w.from_ns - dump.start_ns()}, {"to_ns", w.to_ns - dump.start_ns()}};
}

nlohmann::json kept_json(const ViewDump& d, const TimeWindow& w, std::uint64_t at_ns, const Retention& kept) {
  return {{"from_ns", w.from_ns - d.start_ns()},
          {"to_ns", w.to_ns - d.start_ns()},
          {"at_ns", at_ns - d.start_ns()},
          {"bytes", kept.bytes},
          {"count", kept.count}};
}

nlohmann::json markers_within(const ViewDump& d, const TimeWindow& w) {
  nlohmann::json out = nlohmann::json::array();
  const nlohmann::json instants = instants_json(d.report);  // kept: a range-for would not keep it alive
  for (const nlohmann::json& m : instants["markers"]) {
    const std::uint64_t t = d.start_ns() + m["time_ns"].get<std::uint64_t>();
    if (t >= w.from_ns && t <= w.to_ns) out.push_back(m);
  }
  return out;
}

}  // namespace memrec::analyzer::server
