// Positions in the merged sequence are found by binary search (rows by
// allocation time, frees by free time), states by walking at most one
// checkpoint block; maxima over long stretches use the blocks' saved maxima.
// Scans over many rows skip the row blocks freed before the instant asked
// and split the rest over two threads.
#include "model/allocation_queries.h"

#include <algorithm>
#include <thread>

namespace memrec::analyzer {
namespace {

constexpr std::uint32_t kC = AllocationTable::kCheckpointEvents;
constexpr std::size_t kParallelRows = 1u << 20;

// Advances by one event; returns true if it was an allocation.
bool step(const AllocationTable& t, EventCursor& c) {
  ++c.position;
  if (c.frees < t.frees() && t.free_comes_first(c.frees, c.rows)) {
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

// Calls fn(begin, end, part) over [0, n) in up to two parts, in parallel when large.
template <typename Fn>
void split_rows(std::size_t n, Fn&& fn) {
  if (n < kParallelRows) {
    fn(std::size_t{0}, n, 0);
    return;
  }
  const std::size_t half = n / 2;
  std::thread other([&] { fn(half, n, 1); });
  fn(std::size_t{0}, half, 0);
  other.join();
}

// The time of the last event before the cursor (0 at position 0).
std::uint64_t last_event_time(const AllocationTable& t, const EventCursor& c) {
  if (c.position == 0) return 0;
  const bool last_is_free = c.frees > 0 && (c.rows == 0 || t.rows_before_free(c.frees - 1) >= c.rows);
  return last_is_free ? t.free_time(c.frees - 1) : t.alloc_ns(c.rows - 1);
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
      if (leaked) {
        pt.leaked_bytes += size;
        ++pt.leaked_count;
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

}  // namespace memrec::analyzer
