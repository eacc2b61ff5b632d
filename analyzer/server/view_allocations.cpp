// /allocations: the rows of the allocation table that pass every filter,
// sorted and paged on the server. One scan over the range's rows (or one
// site's rows), split over two threads; sorted by time it only counts per
// chunk and then walks the page's chunks; a page near the front of another
// sort keeps offset + limit candidates in a heap, deeper ones select with
// nth_element.
#include <algorithm>
#include <regex>
#include <string_view>
#include <thread>
#include <variant>

#include "reports/report_output.h"
#include "server/view_api.h"
#include "server/view_params.h"

namespace memrec::analyzer::server {
namespace {

using nlohmann::json;

constexpr std::uint64_t kDefaultLimit = 100;
constexpr std::uint64_t kMaxLimit = 1000;
constexpr std::uint64_t kHeapPages = 1u << 14;  // past this, select among every match instead
constexpr std::uint32_t kChunk = 1u << 16;      // positions counted at once (time sort)
constexpr std::uint32_t kParallelPositions = 1u << 20;
constexpr std::size_t kMaxChain = 10000;

enum class SortBy { kTime, kSize, kLifetime, kAddress };

struct Filter {
  std::uint32_t lo = 0;  // rows [lo, hi): allocated in the range
  std::uint32_t hi = 0;
  std::uint64_t to_ns = 0;
  std::optional<std::uint64_t> alive_at;
  bool leaked = false;
  std::uint64_t min_size = 0;
  std::uint64_t max_size = ~0ull;
  std::uint64_t min_life = 0;
  std::uint64_t max_life = ~0ull;
  std::optional<std::uint32_t> thread;
  std::optional<std::uint32_t> site;
  std::vector<bool> site_ok;  // empty: every site
};

// A block never freed lives forever: it passes min_life and fails max_life.
std::uint64_t lifetime(const AllocationTable& t, std::uint32_t r) {
  const std::uint64_t f = t.free_ns(r);
  return f == kNeverFreed ? kNeverFreed : f - t.alloc_ns(r);
}

bool passes(const AllocationTable& t, const Filter& f, std::uint32_t r) {
  const std::uint64_t size = t.size(r);
  if (size < f.min_size || size > f.max_size) return false;
  const std::uint64_t free = t.free_ns(r);
  const bool never_freed = free == kNeverFreed;
  if (f.leaked && !never_freed && free <= f.to_ns) return false;
  if (f.alive_at && (t.alloc_ns(r) > *f.alive_at || (!never_freed && free <= *f.alive_at))) return false;
  if (f.min_life != 0 || f.max_life != ~0ull) {
    const std::uint64_t life = lifetime(t, r);
    if (life < f.min_life || life > f.max_life) return false;
  }
  if (f.thread && t.thread(r) != *f.thread) return false;
  if (!f.site_ok.empty()) {
    const std::uint32_t s = t.site(r);
    if (s == kNoSite || !f.site_ok[s]) return false;
  }
  return true;
}

// The rows a filter looks at, as positions: the range's rows, or one site's
// rows (its CSR list) within the range.
struct Candidates {
  const std::uint32_t* list = nullptr;  // null: a position is the row itself
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::uint64_t freed_after = 0;  // with `skip`: a match is freed after this
  bool skip = false;

  std::uint32_t row(std::uint32_t p) const { return list != nullptr ? list[p] : p; }
};

Candidates candidates_of(const AllocationTable& t, const Filter& f) {
  Candidates c;
  if (f.leaked) {
    c.freed_after = f.to_ns;
    c.skip = true;
  }
  if (f.alive_at) {
    c.freed_after = std::max(c.freed_after, *f.alive_at);
    c.skip = true;
  }
  if (f.site) {
    const auto [first, last] = t.site_rows(*f.site);
    c.list = first;
    c.begin = static_cast<std::uint32_t>(std::lower_bound(first, last, f.lo) - first);
    c.end = static_cast<std::uint32_t>(std::lower_bound(first, last, f.hi) - first);
  } else {
    c.begin = f.lo;
    c.end = std::max(f.lo, f.hi);
  }
  return c;
}

// Calls fn(row) for every match among positions [a, b), ascending or
// descending; row blocks all freed too early are skipped whole.
template <typename Fn>
void for_each_match(const AllocationTable& t, const Filter& f, const Candidates& c, std::uint32_t a, std::uint32_t b,
                    bool descending, Fn&& fn) {
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  const auto skippable = [&](std::uint32_t r) {
    const std::uint64_t m = t.skip_max_free(r / kS);
    return c.skip && m != kNeverFreed && m <= c.freed_after;
  };
  if (!descending) {
    for (std::uint32_t p = a; p < b;) {
      const std::uint32_t r = c.row(p);
      if (skippable(r)) {
        p = c.list == nullptr ? std::min(b, (r / kS + 1) * kS) : p + 1;
        continue;
      }
      if (passes(t, f, r)) fn(r);
      ++p;
    }
    return;
  }
  for (std::uint32_t p = b; p > a;) {
    const std::uint32_t r = c.row(p - 1);
    if (skippable(r)) {
      p = c.list == nullptr ? std::max(a, r / kS * kS) : p - 1;
      continue;
    }
    if (passes(t, f, r)) fn(r);
    --p;
  }
}

// Runs fn(first, last, part) over [begin, end) in two halves on two threads
// when it is at least `parallel_from` long, else in one part.
template <typename Fn>
void two_parts(std::uint32_t begin, std::uint32_t end, Fn&& fn, std::uint32_t parallel_from = kParallelPositions) {
  if (end - begin < parallel_from) {
    fn(begin, end, 0);
    return;
  }
  const std::uint32_t half = begin + (end - begin) / 2;
  std::thread other([&] { fn(half, end, 1); });
  fn(begin, half, 0);
  other.join();
}

json row_json(const ViewDump& d, std::uint32_t r) {
  const AllocationTable& t = d.table;
  const std::uint64_t start = d.start_ns();
  const std::uint64_t free = t.free_ns(r);
  const bool freed = free != kNeverFreed;
  const std::uint32_t th = t.thread(r);
  const auto& threads = d.report.dump.threads;
  const std::string* name = th < threads.size() && !threads[th].name.empty() ? &threads[th].name : nullptr;
  const std::uint32_t s = t.site(r);
  const CallSites& cs = d.report.sites;
  const bool has_top = s != kNoSite && !cs.sites[s].frames.empty();
  const auto from = t.realloc_from(r);
  const auto to = t.realloc_to(r);
  return {{"index", r},
          {"time_ns", t.alloc_ns(r) - std::min(t.alloc_ns(r), start)},
          {"free_ns", freed ? json(free - std::min(free, start)) : json(nullptr)},
          {"lifetime_ns", freed ? json(free - t.alloc_ns(r)) : json(nullptr)},
          {"size", t.size(r)},
          {"address", t.address(r)},
          {"thread", th},
          {"thread_name", name != nullptr ? json(*name) : json(nullptr)},
          {"site", s != kNoSite ? json(s) : json(nullptr)},
          {"top", has_top ? frame_json(cs.frames[cs.sites[s].frames[0]]) : json(nullptr)},
          {"realloc_from", from ? json(*from) : json(nullptr)},
          {"realloc_to", to ? json(*to) : json(nullptr)}};
}

std::optional<ApiError> read_filter(const ViewDump& d, const ParamFn& param, Filter& f) {
  const AllocationTable& t = d.table;
  const auto range = range_param(d, param);
  if (const auto* e = std::get_if<ApiError>(&range)) return *e;
  const TimeWindow& w = std::get<TimeWindow>(range);
  f.lo = w.from_ns == 0 ? 0 : rows_until(t, w.from_ns - 1);
  f.hi = rows_until(t, w.to_ns);
  f.to_ns = w.to_ns;
  const auto alive = time_param(d, param, "alive_at");
  if (const auto* e = std::get_if<ApiError>(&alive)) return *e;
  f.alive_at = std::get<0>(alive);
  if (const auto leaked = param("leaked")) {
    if (*leaked != "0" && *leaked != "1") return ApiError{400, "leaked must be 0 or 1."};
    f.leaked = *leaked == "1";
  }
  const std::pair<const char*, std::uint64_t*> bounds[] = {
      {"min_size", &f.min_size}, {"max_size", &f.max_size}, {"min_life_ns", &f.min_life}, {"max_life_ns", &f.max_life}};
  for (const auto& [name, into] : bounds) {
    const auto v = count_param(param, name, 0, ~0ull, *into);
    if (const auto* e = std::get_if<ApiError>(&v)) return *e;
    *into = std::get<std::uint64_t>(v);
  }
  if (param("thread")) {
    const std::size_t n = d.report.dump.threads.size();
    const auto v = count_param(param, "thread", 0, n == 0 ? 0 : n - 1, 0);
    if (n == 0 || std::holds_alternative<ApiError>(v)) {
      return ApiError{400,
                      "thread must be a thread index from /threads (0 to " + std::to_string(n == 0 ? 0 : n - 1) + ")."};
    }
    f.thread = static_cast<std::uint32_t>(std::get<std::uint64_t>(v));
  }
  const std::size_t sites = d.report.sites.sites.size();
  if (param("site")) {
    const auto v = count_param(param, "site", 0, sites == 0 ? 0 : sites - 1, 0);
    if (sites == 0 || std::holds_alternative<ApiError>(v)) return ApiError{400, "site must be a call site id."};
    f.site = static_cast<std::uint32_t>(std::get<std::uint64_t>(v));
  }
  if (const auto pattern = param("match")) {
    std::regex re;
    try {
      re = std::regex(*pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return ApiError{400, std::string("match is not a valid regular expression: ") + e.what() + "."};
    }
    f.site_ok.assign(sites, false);
    for (std::size_t s = 0; s < sites; ++s) {
      const std::string_view text = d.site_text[s];
      for (std::size_t at = 0; at < text.size() && !f.site_ok[s];) {
        const std::size_t nl = text.find('\n', at);
        const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        f.site_ok[s] = std::regex_search(text.data() + at, text.data() + end, re);
        at = end + 1;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

ApiAnswer api_allocations(const ViewData& data, const std::string& dump_id, const ParamFn& param) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return fail(*e);
  const ViewDump& d = *std::get<const ViewDump*>(found);
  const AllocationTable& t = d.table;
  Filter f;
  if (const auto e = read_filter(d, param, f)) return fail(*e);
  const std::string sort_name = param("sort").value_or("time");
  SortBy sort = SortBy::kTime;
  if (sort_name == "size") {
    sort = SortBy::kSize;
  } else if (sort_name == "lifetime") {
    sort = SortBy::kLifetime;
  } else if (sort_name == "address") {
    sort = SortBy::kAddress;
  } else if (sort_name != "time") {
    return fail(400, "Unknown sort '" + sort_name.substr(0, 40) + "': use one of time, size, lifetime, address.");
  }
  const std::string order = param("order").value_or("asc");
  if (order != "asc" && order != "desc") return fail(400, "order must be asc or desc.");
  const bool desc = order == "desc";
  const auto offset_v = count_param(param, "offset", 0, 1ull << 32, 0);
  if (const auto* e = std::get_if<ApiError>(&offset_v)) return fail(*e);
  const auto limit_v = count_param(param, "limit", 1, kMaxLimit, kDefaultLimit);
  if (const auto* e = std::get_if<ApiError>(&limit_v)) return fail(*e);
  const std::uint64_t offset = std::get<std::uint64_t>(offset_v);
  const std::uint64_t limit = std::get<std::uint64_t>(limit_v);

  const Candidates cand = candidates_of(t, f);
  std::uint64_t total = 0;
  std::vector<std::uint32_t> page;
  if (sort == SortBy::kTime) {
    // Rows are in time order already: count the matches of every chunk (on
    // two threads), then walk only the chunks that hold the page.
    const std::uint32_t chunks = (cand.end - cand.begin + kChunk - 1) / kChunk;
    std::vector<std::uint64_t> counts(chunks, 0);
    two_parts(
        0, chunks,
        [&](std::uint32_t c0, std::uint32_t c1, int) {
          for (std::uint32_t c = c0; c < c1; ++c) {
            const std::uint32_t a = cand.begin + c * kChunk;
            for_each_match(t, f, cand, a, std::min(cand.end, a + kChunk), false, [&](std::uint32_t) { ++counts[c]; });
          }
        },
        kParallelPositions / kChunk);
    for (const std::uint64_t n : counts) total += n;
    std::uint64_t seen = 0;
    for (std::uint32_t k = 0; k < chunks && page.size() < limit; ++k) {
      const std::uint32_t c = desc ? chunks - 1 - k : k;
      if (seen + counts[c] <= offset) {
        seen += counts[c];
        continue;
      }
      const std::uint32_t a = cand.begin + c * kChunk;
      for_each_match(t, f, cand, a, std::min(cand.end, a + kChunk), desc, [&](std::uint32_t r) {
        if (seen >= offset && page.size() < limit) page.push_back(r);
        ++seen;
      });
    }
  } else {
    const auto key = [&](std::uint32_t r) -> std::uint64_t {
      return sort == SortBy::kSize ? t.size(r) : sort == SortBy::kLifetime ? lifetime(t, r) : t.address(r);
    };
    using Item = std::pair<std::uint64_t, std::uint32_t>;
    // `before(a, b)`: a comes first in the answer; ties by row.
    const auto before = [&](const Item& a, const Item& b) {
      if (a.first != b.first) return desc ? a.first > b.first : a.first < b.first;
      return a.second < b.second;
    };
    const std::uint64_t want = offset + limit;
    std::vector<Item> kept[2];
    std::uint64_t counted[2] = {0, 0};
    two_parts(cand.begin, cand.end, [&](std::uint32_t a, std::uint32_t b, int part) {
      std::vector<Item>& into = kept[part];
      if (want <= kHeapPages) {
        // A heap of the best `want`, the worst of them in front.
        for_each_match(t, f, cand, a, b, false, [&](std::uint32_t r) {
          ++counted[part];
          const Item item{key(r), r};
          if (into.size() < want) {
            into.push_back(item);
            std::push_heap(into.begin(), into.end(), before);
          } else if (before(item, into.front())) {
            std::pop_heap(into.begin(), into.end(), before);
            into.back() = item;
            std::push_heap(into.begin(), into.end(), before);
          }
        });
      } else {
        for_each_match(t, f, cand, a, b, false, [&](std::uint32_t r) { into.emplace_back(key(r), r); });
        counted[part] = into.size();
      }
    });
    total = counted[0] + counted[1];
    std::vector<Item>& all = kept[0];
    all.insert(all.end(), kept[1].begin(), kept[1].end());
    if (offset < all.size()) {
      const auto first = all.begin() + static_cast<std::ptrdiff_t>(offset);
      const auto last = all.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(want, all.size()));
      if (offset > 0) std::nth_element(all.begin(), first, all.end(), before);
      std::partial_sort(first, last, all.end(), before);
      for (auto it = first; it != last; ++it) page.push_back(it->second);
    }
  }
  json rows = json::array();
  for (const std::uint32_t r : page) rows.push_back(row_json(d, r));
  return ok({{"total", total}, {"offset", offset}, {"limit", limit}, {"rows", std::move(rows)}});
}

ApiAnswer api_allocation(const ViewData& data, const std::string& dump_id, const std::string& index) {
  const auto found = find_dump(data, dump_id);
  if (const auto* e = std::get_if<ApiError>(&found)) return fail(*e);
  const ViewDump& d = *std::get<const ViewDump*>(found);
  if (index.size() > 10) return fail(400, "The allocation index is too long.");
  const auto n = parse_count(index, ~0ull);
  if (!n) return fail(400, "The allocation index must be a number.");
  if (*n >= d.table.rows()) return fail(404, "No allocation has index " + index + ".");
  const auto r = static_cast<std::uint32_t>(*n);
  json body = row_json(d, r);
  const std::uint32_t s = d.table.site(r);
  json frames = json::array();
  if (s != kNoSite) {
    const CallSites& cs = d.report.sites;
    for (const std::uint32_t fr : cs.sites[s].frames) frames.push_back(frame_json(cs.frames[fr]));
  }
  body["frames"] = std::move(frames);
  // The chain: back to the block the first realloc started from, then forward.
  std::uint32_t head = r;
  for (std::size_t i = 0; i < kMaxChain; ++i) {
    const auto from = d.table.realloc_from(head);
    if (!from) break;
    head = *from;
  }
  json chain = json::array();
  std::optional<std::uint32_t> at = head;
  for (std::size_t i = 0; at && i < kMaxChain; ++i) {
    chain.push_back(row_json(d, *at));
    at = d.table.realloc_to(*at);
  }
  body["chain"] = std::move(chain);
  return ok(std::move(body));
}

}  // namespace memrec::analyzer::server
