// Positions in the merged sequence are found by binary search (rows by
// allocation time, frees by free time), states by walking at most one
// checkpoint block; maxima over long stretches use the blocks' saved maxima.
// Scans over many rows skip the row blocks freed before the instant asked
// and split the rest over two threads.
#include "model/allocation_queries.h"

#include <algorithm>
#include <bit>
#include <thread>

#include "common/parallel_for.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint32_t kC = AllocationTable::kCheckpointEvents;
constexpr std::size_t kParallelRows = 1u << 20;

// Advances by one event; returns true if it was an allocation.
bool step(const AllocationTable& t, EventCursor& c) {
  if (!t.is_alloc_at(c.position++)) {
    c.heap_bytes -= t.size(t.free_row(c.frees++));
    --c.live_count;
    return false;
  }
  c.heap_bytes += t.size(c.rows++);
  ++c.live_count;
  return true;
}

EventCursor from_checkpoint(const AllocationTable& t, std::size_t i) {
  const HeapCheckpoint& cp = t.checkpoints()[i];
  return EventCursor{std::uint64_t{i} * kC, cp.rows, cp.frees, cp.heap_bytes, cp.live_count};
}

// Calls fn(begin, end, part) over [0, n): in two parts, in parallel, when large.
template <typename Fn>
void split_rows(std::size_t n, const Fn& fn) {
  parallel_parts(std::size_t{0}, n, n < kParallelRows ? 1 : 2,
                 [&](std::size_t b, std::size_t e, std::size_t part) { fn(b, e, static_cast<int>(part)); });
}

// The time of the last event before the cursor (0 at position 0).
std::uint64_t last_event_time(const AllocationTable& t, const EventCursor& c) {
  if (c.position == 0) return 0;
  return t.is_alloc_at(c.position - 1) ? t.alloc_ns(c.rows - 1) : t.free_time(c.frees - 1);
}

// Rows freed at exactly the cursor's last time but already done (sorted): at
// equal times the cursor may sit between two frees.
std::vector<std::uint32_t> done_at_tie(const AllocationTable& t, const EventCursor& c, std::uint64_t time_ns) {
  std::vector<std::uint32_t> rows;
  for (std::uint32_t k = c.frees; k-- > 0 && t.free_time(k) == time_ns;) rows.push_back(t.free_row(k));
  std::sort(rows.begin(), rows.end());
  return rows;
}

}  // namespace

std::uint32_t rows_until(const AllocationTable& t, std::uint64_t time_ns) {
  std::uint32_t lo = 0;
  auto hi = static_cast<std::uint32_t>(t.rows());
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (t.alloc_ns(mid) <= time_ns) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

std::uint32_t frees_until(const AllocationTable& t, std::uint64_t time_ns) {
  std::uint32_t lo = 0;
  auto hi = static_cast<std::uint32_t>(t.frees());
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (t.free_time(mid) <= time_ns) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

EventCursor seek_position(const AllocationTable& t, std::uint64_t position) {
  position = std::min(position, t.events());
  if (t.checkpoints().empty()) return {};
  EventCursor c = from_checkpoint(t, position / kC);
  while (c.position < position) step(t, c);
  return c;
}

EventCursor cursor_at(const AllocationTable& t, std::uint64_t time_ns) {
  return seek_position(t, std::uint64_t{rows_until(t, time_ns)} + frees_until(t, time_ns));
}

EventCursor cursor_before(const AllocationTable& t, std::uint64_t time_ns) {
  return time_ns == 0 ? EventCursor{} : cursor_at(t, time_ns - 1);
}

HeapMax heap_max(const AllocationTable& t, std::uint64_t from, std::uint64_t to, bool allocs_only,
                 std::uint64_t floor) {
  HeapMax best{false, floor, 0};
  to = std::min(to, t.events());
  if (from >= to) return best;
  EventCursor c = seek_position(t, from);
  while (c.position < to) {
    if (c.position % kC == 0 && c.position + kC <= to) {
      const std::size_t block = c.position / kC;
      const HeapCheckpoint& cp = t.checkpoints()[block];
      if (allocs_only) {
        if (cp.block_max_alloc_bytes > best.bytes)
          best = {true, cp.block_max_alloc_bytes, c.position + cp.block_max_alloc_at + 1};
      } else if (cp.block_max_bytes > best.bytes || !best.found) {
        best = {true, std::max(cp.block_max_bytes, best.bytes), 0};
      }
      c = from_checkpoint(t, block + 1);
      continue;
    }
    const bool alloc = step(t, c);
    if (allocs_only ? alloc && c.heap_bytes > best.bytes : (c.heap_bytes > best.bytes || !best.found)) {
      best = {true, std::max(c.heap_bytes, best.bytes), c.position};
    }
  }
  return best;
}

WindowPeak window_peak(const AllocationTable& t, const TimeWindow& w) {
  WindowPeak peak;
  const EventCursor entry = cursor_before(t, w.from_ns);
  const EventCursor last = cursor_at(t, w.to_ns);
  const auto mmaps = std::lower_bound(t.mmap_ns().begin(), t.mmap_ns().end(), w.from_ns);
  const bool entered = last.position > entry.position || (mmaps != t.mmap_ns().end() && *mmaps <= w.to_ns);
  if (!entered) return peak;
  // StackReplay::enter_window: the heap already live when the window opens.
  if (entry.heap_bytes > 0) peak = {entry.heap_bytes, w.from_ns, entry};
  const HeapMax m = heap_max(t, entry.position, last.position, true, peak.bytes);
  if (m.found) {
    peak.at = seek_position(t, m.after);
    peak.bytes = m.bytes;
    peak.time_ns = t.alloc_ns(peak.at.rows - 1);
  }
  return peak;
}

std::uint64_t temporary_frees(const AllocationTable& t, const EventCursor& at) {
  if (t.checkpoints().empty()) return 0;
  const HeapCheckpoint& cp = t.checkpoints()[at.position / kC];
  std::uint64_t n = cp.temporary_frees;
  for (std::uint32_t k = cp.frees; k < at.frees; ++k) n += t.temporary(t.free_row(k)) ? 1 : 0;
  return n;
}

// A thread's temporary allocation is its last one until freed, so few rows
// qualify: the skip index passes over every block without one.
std::vector<std::uint64_t> temporary_frees_from_before(const AllocationTable& t, const TimeWindow& w) {
  std::vector<std::uint64_t> out;
  if (w.from_ns == 0) return out;
  const std::uint32_t lo = rows_until(t, w.from_ns - 1);
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  for (std::size_t b = 0; b * kS < lo; ++b) {
    if (t.skip_max_temporary_free(b) < w.from_ns) continue;
    const auto end = static_cast<std::uint32_t>(std::min<std::size_t>((b + 1) * kS, lo));
    for (auto r = static_cast<std::uint32_t>(b * kS); r < end; ++r) {
      const std::uint64_t f = t.free_ns(r);
      if (t.temporary(r) && f >= w.from_ns && f <= w.to_ns) out.push_back(f);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool live_after(const AllocationTable& t, const EventCursor& at, std::uint32_t row) {
  if (row >= at.rows) return false;
  const std::uint64_t time = last_event_time(t, at);
  const std::uint64_t f = t.free_ns(row);
  if (f != time) return f > time;
  const std::vector<std::uint32_t> tie = done_at_tie(t, at, time);
  return !std::binary_search(tie.begin(), tie.end(), row);
}

SiteLive live_by_site(const AllocationTable& t, const EventCursor& at) {
  const std::size_t n = t.sites();
  SiteLive out{std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0)};
  if (at.rows == 0) return out;
  const std::uint64_t time = last_event_time(t, at);
  const std::vector<std::uint32_t> tie = done_at_tie(t, at, time);
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  const std::size_t blocks = (std::size_t{at.rows} + kS - 1) / kS;
  SiteLive second{std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0)};
  split_rows(blocks, [&](std::size_t b0, std::size_t b1, int part) {
    SiteLive& into = part == 0 ? out : second;
    for (std::size_t b = b0; b < b1; ++b) {
      if (t.skip_max_free(b) < time) continue;
      const auto end = static_cast<std::uint32_t>(std::min<std::size_t>((b + 1) * kS, at.rows));
      for (auto r = static_cast<std::uint32_t>(b * kS); r < end; ++r) {
        const std::uint64_t f = t.free_ns(r);
        if (f < time || (f == time && std::binary_search(tie.begin(), tie.end(), r))) continue;
        const std::uint32_t s = t.site(r);
        if (s == kNoSite) continue;
        into.bytes[s] += t.size(r);
        ++into.count[s];
      }
    }
  });
  for (std::size_t s = 0; s < n; ++s) {
    out.bytes[s] += second.bytes[s];
    out.count[s] += second.count[s];
  }
  return out;
}

WindowFigures window_figures(const AllocationTable& t, const TimeWindow& w) {
  WindowFigures out;
  HeapTotals& tot = out.totals;
  const std::size_t n = t.sites();
  const std::uint32_t lo = w.from_ns == 0 ? 0 : rows_until(t, w.from_ns - 1);
  const std::uint32_t hi = rows_until(t, w.to_ns);
  std::vector<SiteFigures> parts[2] = {std::vector<SiteFigures>(n), std::vector<SiteFigures>(n)};
  HeapTotals part_totals[2];
  split_rows(hi > lo ? hi - lo : 0, [&](std::size_t b, std::size_t e, int part) {
    std::vector<SiteFigures>& into = parts[part];
    HeapTotals& pt = part_totals[part];
    for (std::uint32_t r = lo + static_cast<std::uint32_t>(b); r < lo + e; ++r) {
      const std::uint64_t size = t.size(r);
      const std::uint64_t f = t.free_ns(r);
      const bool temporary = t.temporary(r) && f <= w.to_ns;
      const bool leaked = f > w.to_ns || f == kNeverFreed;  // also when to is the end of time
      ++pt.allocations;
      pt.allocated_bytes += size;
      pt.temporary += temporary ? 1 : 0;
      pt.histograms.sizes.add(size, size);
      if (leaked) {
        pt.leaked_bytes += size;
        ++pt.leaked_count;
        ++pt.histograms.unfreed;
        pt.histograms.unfreed_bytes += size;
      } else {
        pt.histograms.lifetimes.add(f - t.alloc_ns(r), size);
      }
      const std::uint32_t s = t.site(r);
      if (s == kNoSite) continue;
      SiteFigures& sf = into[s];
      ++sf.allocations;
      sf.allocated_bytes += size;
      sf.temporary += temporary ? 1 : 0;
      if (leaked) {
        sf.leaked_bytes += size;
        ++sf.leaked_count;
      }
    }
  });
  out.sites = std::move(parts[0]);
  for (std::size_t s = 0; s < n; ++s) {
    SiteFigures& a = out.sites[s];
    const SiteFigures& b = parts[1][s];
    a.allocations += b.allocations;
    a.allocated_bytes += b.allocated_bytes;
    a.temporary += b.temporary;
    a.leaked_bytes += b.leaked_bytes;
    a.leaked_count += b.leaked_count;
  }
  for (const HeapTotals& pt : part_totals) {
    tot.allocations += pt.allocations;
    tot.allocated_bytes += pt.allocated_bytes;
    tot.temporary += pt.temporary;
    tot.leaked_bytes += pt.leaked_bytes;
    tot.leaked_count += pt.leaked_count;
    tot.histograms.merge(pt.histograms);
  }
  const auto count_in = [&](const std::vector<std::uint64_t>& v) {
    return static_cast<std::uint64_t>(std::upper_bound(v.begin(), v.end(), w.to_ns) -
                                      std::lower_bound(v.begin(), v.end(), w.from_ns));
  };
  const std::uint32_t frees_lo = w.from_ns == 0 ? 0 : frees_until(t, w.from_ns - 1);
  tot.frees = frees_until(t, w.to_ns) - frees_lo - count_in(t.replaced_ns());
  tot.unmatched_frees = count_in(t.unmatched_free_ns());
  tot.replaced_blocks = static_cast<std::uint64_t>(
      std::upper_bound(t.replaced_ns().begin(), t.replaced_ns().end(), w.to_ns) - t.replaced_ns().begin());

  const WindowPeak peak = window_peak(t, w);
  tot.peak_bytes = peak.bytes;
  tot.peak_time_ns = peak.time_ns.value_or(0);
  out.peak_at = peak.at;
  if (peak.time_ns) {
    const SiteLive live = live_by_site(t, peak.at);
    for (std::size_t s = 0; s < n; ++s) out.sites[s].peak_bytes = live.bytes[s];
  }
  return out;
}

std::vector<std::uint64_t> site_sparklines(const AllocationTable& t, const std::vector<std::uint32_t>& sites,
                                           const TimeWindow& w, std::uint32_t n) {
  std::vector<std::uint64_t> out(sites.size() * n, 0);
  if (n == 0 || w.to_ns < w.from_ns) return out;
  // The end of part j: the last ns of [from + j × span / n, from + (j + 1) × span / n).
  const auto span = static_cast<unsigned __int128>(w.to_ns - w.from_ns) + 1;
  std::vector<std::uint64_t> ends(n);
  for (std::uint32_t j = 0; j < n; ++j) {
    const auto len = static_cast<std::uint64_t>(span * (j + 1) / n);
    ends[j] = len == 0 ? w.from_ns : w.from_ns + len - 1;
  }
  // The first j with ends[j] >= time: a guess from the even split, then fixed up.
  const auto first_end_at_or_after = [&](std::uint64_t time) -> std::uint32_t {
    if (time <= w.from_ns) return 0;
    if (time > w.to_ns) return n;
    // 64-bit arithmetic when it cannot overflow: a 128-bit division per row is slow.
    const std::uint64_t offset = time - w.from_ns;
    auto j = span < (std::uint64_t{1} << 56) && n <= 256
                 ? static_cast<std::uint32_t>(offset * n / static_cast<std::uint64_t>(span))
                 : static_cast<std::uint32_t>(static_cast<unsigned __int128>(offset) * n / span);
    j = std::min(j, n - 1);
    while (j > 0 && ends[j - 1] >= time) --j;
    while (j < n && ends[j] < time) ++j;
    return j;
  };
  // Each site's rows in up to two parts in parallel, a difference array each.
  std::vector<std::int64_t> diffs[2] = {std::vector<std::int64_t>(std::size_t{n} + 1),
                                        std::vector<std::int64_t>(std::size_t{n} + 1)};
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const auto [first, last] = t.site_rows(sites[i]);
    split_rows(static_cast<std::size_t>(last - first), [&](std::size_t b, std::size_t e, int part) {
      std::vector<std::int64_t>& diff = diffs[part];
      std::fill(diff.begin(), diff.end(), 0);
      for (const std::uint32_t* r = first + b; r != first + e; ++r) {
        const std::uint64_t a = t.alloc_ns(*r);
        if (a > w.to_ns) break;
        const std::uint64_t f = t.free_ns(*r);
        if (f <= w.from_ns) continue;
        // Live at ends[j] when a <= ends[j] < f.
        const std::uint32_t j0 = first_end_at_or_after(a);
        if (j0 == n || f <= ends[j0]) continue;  // freed before the next end: most short-lived blocks
        const std::uint32_t j1 = first_end_at_or_after(f);
        const auto size = static_cast<std::int64_t>(t.size(*r));
        diff[j0] += size;
        diff[j1] -= size;
      }
    });
    const bool two = static_cast<std::size_t>(last - first) >= kParallelRows;
    std::int64_t run = 0;
    for (std::uint32_t j = 0; j < n; ++j) {
      run += diffs[0][j] + (two ? diffs[1][j] : 0);
      out[i * n + j] = static_cast<std::uint64_t>(run);
    }
  }
  return out;
}

// ---- /allocations: filtered, sorted pages of rows ----

namespace {

constexpr std::uint32_t kChunk = 1u << 16;      // positions counted at once (time sort)
constexpr std::uint64_t kHeapPages = 1u << 12;  // offset + limit up to this: a heap of candidates
constexpr std::uint32_t kParallelPositions = 1u << 20;
constexpr std::uint64_t kCollectKeys = 1u << 16;  // matches copied at most to sort the page's
// Histogram buckets of key − base: below kExact one per value, above it
// kMantissa significant bits (a width of at most 1/1024 of the values there).
constexpr unsigned kMantissa = 11;
constexpr std::uint64_t kExact = 1u << kMantissa;
constexpr std::uint32_t kHalf = 1u << (kMantissa - 1);
constexpr std::uint32_t kBuckets = ((64 - kMantissa) << (kMantissa - 1)) + kExact;

std::uint32_t bucket_of(std::uint64_t v) {
  if (v < kExact) return static_cast<std::uint32_t>(v);
  const auto shift = static_cast<std::uint32_t>(std::bit_width(v)) - kMantissa;
  return (shift << (kMantissa - 1)) + static_cast<std::uint32_t>(v >> shift);
}
std::uint64_t bucket_first(std::uint32_t b) {
  if (b < kExact) return b;
  const std::uint32_t shift = b / kHalf - 1;
  return std::uint64_t{b - shift * kHalf} << shift;
}
std::uint64_t bucket_last(std::uint32_t b) {
  if (b < kExact) return b;
  return bucket_first(b) + ((std::uint64_t{1} << (b / kHalf - 1)) - 1);
}

bool passes(const AllocationTable& t, const RowFilter& f, std::uint32_t r) {
  // With `realloc` the candidates are the chain rows, not the site's rows.
  if (f.realloc && f.site && t.site(r) != *f.site) return false;
  return passes(t, f.rows, r);
}

// The rows a filter looks at, as positions: the range's rows, or one site's
// rows (its CSR list) within the range. Positions ascend with rows.
struct Candidates {
  const std::uint32_t* list = nullptr;  // null: a position is the row itself
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  std::uint64_t freed_after = 0;  // with `skip`: a match is freed after this
  bool skip = false;
  bool tests = false;  // false: every candidate matches (no test to run)

  std::uint32_t row(std::uint32_t p) const { return list != nullptr ? list[p] : p; }
};

Candidates candidates_of(const AllocationTable& t, const RowFilter& f) {
  Candidates c;
  if (f.rows.live_after_ns) {
    c.freed_after = *f.rows.live_after_ns;
    c.skip = true;
  }
  if (f.rows.alive_at_ns) {
    c.freed_after = std::max(c.freed_after, *f.rows.alive_at_ns);
    c.skip = true;
  }
  c.tests = !f.rows.keeps_all() || (f.realloc && f.site);
  // Realloc chains are rare: their list is the shorter one to walk.
  std::pair<const std::uint32_t*, const std::uint32_t*> list{nullptr, nullptr};
  if (f.realloc) {
    list = {t.realloc_rows().data(), t.realloc_rows().data() + t.realloc_rows().size()};
  } else if (f.site) {
    list = t.site_rows(*f.site);
  }
  if (f.realloc || f.site) {
    const auto [first, last] = list;
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
void for_each_match(const AllocationTable& t, const RowFilter& f, const Candidates& c, std::uint32_t a, std::uint32_t b,
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
      if (!c.tests || passes(t, f, r)) fn(r);
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
    if (!c.tests || passes(t, f, r)) fn(r);
    --p;
  }
}

// Runs fn(first, last, part) over [begin, end) in two halves, in parallel,
// when it is at least `parallel_from` long, else in one part (part 1 empty).
template <typename Fn>
void two_parts(std::uint32_t begin, std::uint32_t end, const Fn& fn, std::uint32_t parallel_from = kParallelPositions) {
  if (end - begin < parallel_from) {
    fn(begin, end, 0);
    fn(end, end, 1);
    return;
  }
  parallel_parts(begin, end, 2,
                 [&](std::uint32_t b, std::uint32_t e, std::size_t part) { fn(b, e, static_cast<int>(part)); });
}

// Rows are in time order already: count the matches of every chunk (on two
// threads), then walk only the chunks that hold the page.
RowPage select_by_time(const AllocationTable& t, const RowFilter& f, const Candidates& cand, bool desc,
                       std::uint64_t offset, std::uint64_t limit) {
  RowPage out;
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
  for (const std::uint64_t n : counts) out.total += n;
  std::uint64_t seen = 0;
  for (std::uint32_t k = 0; k < chunks && out.rows.size() < limit; ++k) {
    const std::uint32_t c = desc ? chunks - 1 - k : k;
    if (seen + counts[c] <= offset) {
      seen += counts[c];
      continue;
    }
    const std::uint32_t a = cand.begin + c * kChunk;
    for_each_match(t, f, cand, a, std::min(cand.end, a + kChunk), desc, [&](std::uint32_t r) {
      if (seen >= offset && out.rows.size() < limit) out.rows.push_back(r);
      ++seen;
    });
  }
  return out;
}

using Keyed = std::pair<std::uint64_t, std::uint32_t>;  // (key, row)

// Puts `item` into a heap of at most `want`, the worst in front; the
// caller has checked that it beats the front of a full heap.
template <typename Before>
[[gnu::noinline]] void keep_best(std::vector<Keyed>& heap, const Keyed& item, std::uint64_t want, Before before) {
  if (heap.size() == want) {
    std::pop_heap(heap.begin(), heap.end(), before);
    heap.pop_back();
  }
  heap.push_back(item);
  std::push_heap(heap.begin(), heap.end(), before);
}

// A page near the front: a heap of the best offset + limit per part, the
// worst of them in front, then the page out of both.
template <typename Key, typename Before>
RowPage select_by_heap(const AllocationTable& t, const RowFilter& f, const Candidates& cand, Key key, Before before,
                       std::uint64_t offset, std::uint64_t limit) {
  RowPage out;
  const std::uint64_t want = offset + limit;
  std::vector<Keyed> kept[2];
  std::uint64_t counted[2] = {0, 0};
  two_parts(cand.begin, cand.end, [&](std::uint32_t a, std::uint32_t b, int part) {
    std::vector<Keyed>& into = kept[part];
    for_each_match(t, f, cand, a, b, false, [&](std::uint32_t r) {
      ++counted[part];
      const Keyed item{key(r), r};
      if (into.size() < want || before(item, into.front())) keep_best(into, item, want, before);
    });
  });
  out.total = counted[0] + counted[1];
  std::vector<Keyed>& all = kept[0];
  all.insert(all.end(), kept[1].begin(), kept[1].end());
  if (offset < all.size()) {
    const auto first = all.begin() + static_cast<std::ptrdiff_t>(offset);
    const auto last = all.begin() + static_cast<std::ptrdiff_t>(std::min<std::uint64_t>(want, all.size()));
    std::partial_sort(all.begin(), last, all.end(), before);
    for (auto it = first; it != last; ++it) out.rows.push_back(it->second);
  }
  return out;
}

// One histogram scan: the matches' keys in [lo, hi] by bucket of key − lo,
// per part (the parts' rows ascend: part 0's before part 1's).
struct KeyHistogram {
  std::vector<std::uint32_t> counts[2];
  std::uint64_t total = 0;    // every match, in [lo, hi] or not
  std::uint64_t min = ~0ull;  // of the keys in [lo, hi]
  std::uint64_t max = 0;
};

template <typename Key>
KeyHistogram histogram(const AllocationTable& t, const RowFilter& f, const Candidates& cand, Key key, std::uint64_t lo,
                       std::uint64_t hi) {
  KeyHistogram h;
  std::uint64_t total[2] = {0, 0};
  std::uint64_t min[2] = {~0ull, ~0ull};
  std::uint64_t max[2] = {0, 0};
  two_parts(cand.begin, cand.end, [&](std::uint32_t a, std::uint32_t b, int part) {
    std::vector<std::uint32_t>& counts = h.counts[part];
    counts.assign(kBuckets, 0);
    std::uint64_t n = 0;
    std::uint64_t lo_seen = ~0ull;
    std::uint64_t hi_seen = 0;
    for_each_match(t, f, cand, a, b, false, [&](std::uint32_t r) {
      ++n;
      const std::uint64_t k = key(r);
      if (k < lo || k > hi) return;
      lo_seen = std::min(lo_seen, k);
      hi_seen = std::max(hi_seen, k);
      ++counts[bucket_of(k - lo)];
    });
    total[part] = n;
    min[part] = lo_seen;
    max[part] = hi_seen;
  });
  h.total = total[0] + total[1];
  h.min = std::min(min[0], min[1]);
  h.max = std::max(max[0], max[1]);
  return h;
}

// A page deeper in, without copying the matches: the ranks [from, to) of
// the page lie among the matches with keys in [lo, hi], `skip` of the
// matches ranking before those. One scan makes a histogram of their keys;
// the page then spans buckets in the answer's order, each in one of three
// ways: one key (a last scan picks the rows by their rank among the equal
// keys, by row), few matches (the last scan copies and sorts them), or many
// (a bucket holding an end of the page: narrow to its keys, recursively; a
// bucket is at most 1/1024 of the range, so that ends).
template <typename Key, typename Before>
class HistogramSelect {
 public:
  HistogramSelect(const AllocationTable& t, const RowFilter& f, const Candidates& cand, Key key, Before before,
                  bool desc)
      : t_(t), f_(f), cand_(cand), key_(key), before_(before), desc_(desc) {}

  RowPage run(std::uint64_t offset, std::uint64_t limit) {
    offset_ = offset;
    fill(0, ~0ull, 0, offset, offset + limit, true);
    return std::move(page_);
  }

 private:
  struct Span {
    std::uint32_t b_lo = 0;  // buckets [b_lo, b_hi] in key order
    std::uint32_t b_hi = 0;
    std::vector<std::uint64_t> first_rank;  // by bucket − b_lo: the rank of its first match
  };

  void fill(std::uint64_t lo, std::uint64_t hi, std::uint64_t skip, std::uint64_t from, std::uint64_t to,
            bool first_scan) {
    const KeyHistogram h = histogram(t_, f_, cand_, key_, lo, hi);
    if (first_scan) {
      page_.total = h.total;
      to = std::min(to, h.total);
      if (from >= to) return;
      page_.rows.assign(to - from, kNoRow);
    }
    const auto count = [&](std::uint32_t b) { return std::uint64_t{h.counts[0][b]} + h.counts[1][b]; };
    // The buckets holding ranks `from` and to − 1, walking in the answer's order.
    Span span;
    std::uint64_t seen = skip;
    std::uint32_t ba = kBuckets;
    std::uint32_t bb = kBuckets;
    for (std::uint32_t i = 0; i < kBuckets && bb == kBuckets; ++i) {
      const std::uint32_t b = desc_ ? kBuckets - 1 - i : i;
      const std::uint64_t n = count(b);
      if (ba == kBuckets && seen + n > from) ba = b;
      if (ba != kBuckets && seen + n >= to) bb = b;
      seen += n;
    }
    span.b_lo = std::min(ba, bb);
    span.b_hi = std::max(ba, bb);
    span.first_rank.resize(span.b_hi - span.b_lo + 1);
    seen = skip;
    for (std::uint32_t i = 0; i < kBuckets; ++i) {
      const std::uint32_t b = desc_ ? kBuckets - 1 - i : i;
      if (b >= span.b_lo && b <= span.b_hi) span.first_rank[b - span.b_lo] = seen;
      seen += count(b);
    }
    // Buckets too big to copy and of more than one key: narrow to each (an end of the page).
    std::vector<bool> narrowed(span.b_hi - span.b_lo + 1, false);
    for (const std::uint32_t b : {ba, bb}) {
      if (b < kExact || count(b) <= kCollectKeys || narrowed[b - span.b_lo]) continue;
      narrowed[b - span.b_lo] = true;
      const std::uint64_t r0 = span.first_rank[b - span.b_lo];
      const std::uint64_t key_lo = std::max(lo + bucket_first(b), h.min);
      const std::uint64_t key_hi = std::min(lo + std::min(bucket_last(b), hi - lo), h.max);
      fill(key_lo, key_hi, r0, std::max(from, r0), std::min(to, r0 + count(b)), false);
    }
    finish(h, span, narrowed, lo, hi, from, to);
  }

  // The last scan over the span's buckets not narrowed.
  void finish(const KeyHistogram& h, const Span& span, const std::vector<bool>& narrowed, std::uint64_t lo,
              std::uint64_t hi, std::uint64_t from, std::uint64_t to) {
    bool any = false;
    for (std::uint32_t b = span.b_lo; b <= span.b_hi; ++b) any = any || !narrowed[b - span.b_lo];
    if (!any) return;
    const std::uint64_t key_lo = lo + bucket_first(span.b_lo);
    const std::uint64_t key_hi = lo + std::min(bucket_last(span.b_hi), hi - lo);
    std::vector<Keyed> kept[2];
    two_parts(cand_.begin, cand_.end, [&](std::uint32_t a, std::uint32_t b_end, int part) {
      // The next rank of each one-key bucket: part 1's rows follow part 0's.
      std::vector<std::uint64_t> next(span.first_rank);
      if (part == 1) {
        for (std::uint32_t b = span.b_lo; b < std::min(span.b_hi + 1, static_cast<std::uint32_t>(kExact)); ++b)
          next[b - span.b_lo] += h.counts[0][b];
      }
      for_each_match(t_, f_, cand_, a, b_end, false, [&](std::uint32_t r) {
        const std::uint64_t k = key_(r);
        if (k < key_lo || k > key_hi) return;
        const std::uint32_t b = bucket_of(k - lo);
        if (narrowed[b - span.b_lo]) return;
        if (b < kExact) {
          const std::uint64_t at = next[b - span.b_lo]++;
          if (at >= from && at < to) page_.rows[at - offset_] = r;
        } else {
          kept[part].emplace_back(k, r);
        }
      });
    });
    std::vector<Keyed>& all = kept[0];
    all.insert(all.end(), kept[1].begin(), kept[1].end());
    std::sort(all.begin(), all.end(), before_);
    // Each copied bucket's matches are consecutive now, in rank order.
    std::uint32_t bucket = kBuckets;
    std::uint64_t at = 0;
    for (const Keyed& item : all) {
      const std::uint32_t b = bucket_of(item.first - lo);
      if (b != bucket) {
        bucket = b;
        at = span.first_rank[b - span.b_lo];
      }
      if (at >= from && at < to) page_.rows[at - offset_] = item.second;
      ++at;
    }
  }

  const AllocationTable& t_;
  const RowFilter& f_;
  const Candidates& cand_;
  Key key_;
  Before before_;
  bool desc_;
  std::uint64_t offset_ = 0;
  RowPage page_;
};

template <typename Key>
RowPage select_by_key(const AllocationTable& t, const RowFilter& f, const Candidates& cand, Key key, bool desc,
                      std::uint64_t offset, std::uint64_t limit) {
  // `before(a, b)`: a comes first in the answer; ties by row.
  const auto before = [desc](const Keyed& a, const Keyed& b) {
    if (a.first != b.first) return desc ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  if (offset + limit <= kHeapPages) return select_by_heap(t, f, cand, key, before, offset, limit);
  return HistogramSelect(t, f, cand, key, before, desc).run(offset, limit);
}

}  // namespace

std::uint64_t row_lifetime(const AllocationTable& t, std::uint32_t row) {
  const std::uint64_t f = t.free_ns(row);
  return f == kNeverFreed ? kNeverFreed : f - t.alloc_ns(row);
}

RowPage allocation_page(const AllocationTable& t, const RowFilter& f, RowSort sort, bool descending,
                        std::uint64_t offset, std::uint64_t limit) {
  const Candidates cand = candidates_of(t, f);
  switch (sort) {
    case RowSort::kTime:
      return select_by_time(t, f, cand, descending, offset, limit);
    case RowSort::kSize:
      return select_by_key(
          t, f, cand, [&t](std::uint32_t r) { return t.size(r); }, descending, offset, limit);
    case RowSort::kLifetime:
      return select_by_key(
          t, f, cand, [&t](std::uint32_t r) { return row_lifetime(t, r); }, descending, offset, limit);
    case RowSort::kAddress:
      return select_by_key(
          t, f, cand, [&t](std::uint32_t r) { return t.address(r); }, descending, offset, limit);
  }
  return {};
}

}  // namespace memrec::analyzer
