// Figures over rows skip the row blocks freed before the instant asked and
// split the rest in two parts, in parallel (common/parallel_for.h); each
// part reads its rows a coded block at a time (RowReader).
#include "model/window_figures.h"

#include <algorithm>

#include "common/parallel_for.h"
#include "model/row_reader.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint32_t kC = AllocationTable::kCheckpointEvents;
constexpr std::size_t kParallelRows = 1u << 20;

// Calls fn(begin, end, part) over [0, n): in two parts, in parallel, when large.
template <typename Fn>
void split_rows(std::size_t n, const Fn& fn) {
  parallel_parts(std::size_t{0}, n, n < kParallelRows ? 1 : 2,
                 [&](std::size_t b, std::size_t e, std::size_t part) { fn(b, e, static_cast<int>(part)); });
}

// Calls fn(part, reader, begin, end) for rows [lo, hi) by block, rows
// [begin, end) of one block, read by seeking `reader` to each. In two parts
// of whole blocks, in parallel, when large. `wanted(b)` says whether block b
// is worth reading.
template <typename Wanted, typename Fn>
void scan_blocks(const AllocationTable& t, std::uint32_t lo, std::uint32_t hi,
                 std::initializer_list<std::size_t> columns, const Wanted& wanted, const Fn& fn) {
  if (hi <= lo) return;
  const std::size_t b0 = lo / kBlockValues;
  const std::size_t b1 = (hi - 1) / kBlockValues + 1;
  const std::size_t parts = hi - lo < kParallelRows ? 1 : 2;
  parallel_parts(b0, b1, parts, [&](std::size_t first_block, std::size_t end_block, std::size_t part) {
    RowReader reader(t, columns);
    for (std::size_t b = first_block; b < end_block; ++b) {
      if (!wanted(b)) continue;
      const auto first = static_cast<std::uint32_t>(b * kBlockValues);
      fn(static_cast<int>(part), reader, std::max(lo, first),
         static_cast<std::uint32_t>(std::min<std::uint64_t>(hi, std::uint64_t{first} + kBlockValues)));
    }
  });
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

LiveBlocks site_live_at(const AllocationTable& t, std::uint32_t site, std::uint64_t time_ns) {
  LiveBlocks out;
  const auto [first, last] = t.site_rows(site);
  RowReader reader(t, {kRowTime, kRowSize});
  for (const std::uint32_t* row = first; row != last; ++row) {
    reader.seek(*row);
    if (reader[kRowTime] > time_ns) break;
    if (reader.free_ns() > time_ns) {
      out.bytes += reader[kRowSize];
      ++out.count;
    }
  }
  return out;
}

SiteLive live_by_site(const AllocationTable& t, const EventCursor& at) {
  const std::size_t n = t.sites();
  SiteLive out{std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0)};
  if (at.rows == 0) return out;
  const std::uint64_t time = last_event_time(t, at);
  const std::vector<std::uint32_t> tie = done_at_tie(t, at, time);
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  // A block is read if a skip block of it has a row freed at or after `time`.
  const auto wanted = [&](std::size_t b) {
    const std::size_t end_row = std::min<std::size_t>((b + 1) * kBlockValues, at.rows);
    for (std::size_t i = b * kBlockValues / kS; i * kS < end_row; ++i) {
      if (t.skip_max_free(i) >= time) return true;
    }
    return false;
  };
  SiteLive second{std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0)};
  scan_blocks(t, 0, at.rows, {kRowTime, kRowSize, kRowStack}, wanted,
              [&](int part, RowReader& reader, std::uint32_t begin, std::uint32_t end) {
                SiteLive& into = part == 0 ? out : second;
                for (std::uint32_t r = begin; r < end; ++r) {
                  if (t.skip_max_free(r / kS) < time) {
                    r = (r / kS + 1) * kS - 1;
                    continue;
                  }
                  reader.seek(r);
                  const std::uint64_t f = reader.free_ns();
                  if (f < time || (f == time && std::binary_search(tie.begin(), tie.end(), r))) continue;
                  const std::uint32_t s = t.site_of_stack(static_cast<std::uint32_t>(reader[kRowStack]));
                  if (s == kNoSite) continue;
                  into.bytes[s] += reader[kRowSize];
                  ++into.count[s];
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
  const auto every = [](std::size_t) { return true; };
  scan_blocks(t, lo, hi, {kRowTime, kRowSize, kRowStack}, every,
              [&](int part, RowReader& reader, std::uint32_t begin, std::uint32_t end) {
                std::vector<SiteFigures>& into = parts[part];
                HeapTotals& pt = part_totals[part];
                for (std::uint32_t r = begin; r < end; ++r) {
                  reader.seek(r);
                  const std::uint64_t size = reader[kRowSize];
                  const std::uint64_t f = reader.free_ns();
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
                    pt.histograms.lifetimes.add(f - reader[kRowTime], size);
                  }
                  const std::uint32_t s = t.site_of_stack(static_cast<std::uint32_t>(reader[kRowStack]));
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

SiteAllocations site_allocations(const AllocationTable& t, const TimeWindow& w) {
  const std::size_t n = t.sites();
  SiteAllocations out{std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0)};
  const std::uint32_t lo = w.from_ns == 0 ? 0 : rows_until(t, w.from_ns - 1);
  const std::uint32_t hi = rows_until(t, w.to_ns);
  if (hi <= lo) return out;
  std::optional<BlockReader> reader;
  for (std::size_t b = lo / kBlockValues; b * kBlockValues < hi; ++b) {
    const auto first = static_cast<std::uint32_t>(b * kBlockValues);
    const auto end = static_cast<std::uint32_t>(std::min<std::size_t>(std::size_t{first} + kBlockValues, t.rows()));
    const auto sums = t.block_site_sums(b);
    if (sums && lo <= first && end <= hi) {
      for (const AllocationTable::SiteSum& s : *sums) {
        out.count[s.site] += s.count;
        out.bytes[s.site] += s.bytes;
      }
      continue;
    }
    if (!reader) reader.emplace(t.row_blocks(), std::initializer_list<std::size_t>{kRowStack, kRowSize});
    reader->load(b);
    const std::uint64_t* stacks = (*reader)[kRowStack];
    const std::uint64_t* sizes = (*reader)[kRowSize];
    for (std::uint32_t r = std::max(lo, first); r < std::min(hi, end); ++r) {
      const std::uint32_t s = t.site_of_stack(static_cast<std::uint32_t>(stacks[r - first]));
      if (s == kNoSite) continue;
      ++out.count[s];
      out.bytes[s] += sizes[r - first];
    }
  }
  return out;
}

namespace {

// site_sparklines in one pass over rows [0, hi) for all of `sites`,
// skipping the row blocks all freed by the window's start.
template <typename EndOf>
void sparklines_by_range(const AllocationTable& t, const std::vector<std::uint32_t>& sites, const TimeWindow& w,
                         std::uint32_t n, std::uint32_t hi, const EndOf& first_end_at_or_after,
                         const std::vector<std::uint64_t>& ends, std::vector<std::uint64_t>& out) {
  std::vector<std::int32_t> index(t.sites(), -1);
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (sites[i] < index.size()) index[sites[i]] = static_cast<std::int32_t>(i);
  }
  const std::size_t stride = std::size_t{n} + 1;
  std::vector<std::int64_t> diffs[2] = {std::vector<std::int64_t>(sites.size() * stride),
                                        std::vector<std::int64_t>(sites.size() * stride)};
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  const auto wanted = [&](std::size_t b) {
    const std::size_t end_row = std::min<std::size_t>((b + 1) * kBlockValues, hi);
    for (std::size_t i = b * kBlockValues / kS; i * kS < end_row; ++i) {
      if (t.skip_max_free(i) > w.from_ns) return true;
    }
    return false;
  };
  scan_blocks(t, 0, hi, {kRowTime, kRowSize, kRowStack}, wanted,
              [&](int part, RowReader& reader, std::uint32_t begin, std::uint32_t end) {
                std::vector<std::int64_t>& diff = diffs[part];
                for (std::uint32_t r = begin; r < end; ++r) {
                  reader.seek(r);
                  const std::uint32_t s = t.site_of_stack(static_cast<std::uint32_t>(reader[kRowStack]));
                  if (s == kNoSite || s >= index.size() || index[s] < 0) continue;
                  const std::uint64_t f = reader.free_ns();
                  if (f <= w.from_ns) continue;
                  const std::uint32_t j0 = first_end_at_or_after(reader[kRowTime]);
                  if (j0 == n || f <= ends[j0]) continue;
                  const std::uint32_t j1 = first_end_at_or_after(f);
                  const auto size = static_cast<std::int64_t>(reader[kRowSize]);
                  std::int64_t* d = diff.data() + static_cast<std::size_t>(index[s]) * stride;
                  d[j0] += size;
                  d[j1] -= size;
                }
              });
  for (std::size_t i = 0; i < sites.size(); ++i) {
    if (sites[i] >= index.size()) continue;
    const auto k = static_cast<std::size_t>(index[sites[i]]);  // a site listed twice: its last place
    std::int64_t run = 0;
    for (std::uint32_t j = 0; j < n; ++j) {
      run += diffs[0][k * stride + j] + diffs[1][k * stride + j];
      out[i * n + j] = static_cast<std::uint64_t>(run);
    }
  }
}

}  // namespace

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
  // Reading a site's rows decodes every block they touch: when the sites'
  // rows touch more blocks than the range has, one pass over the range's
  // blocks for all of them costs less.
  const std::uint32_t hi = rows_until(t, w.to_ns);
  const std::size_t range_blocks = (std::size_t{hi} + kBlockValues - 1) / kBlockValues;
  std::size_t touched = 0;
  for (const std::uint32_t site : sites) {
    const auto [first, last] = t.site_rows(site);
    touched += std::min<std::size_t>(static_cast<std::size_t>(last - first), range_blocks);
  }
  if (touched > range_blocks) {
    sparklines_by_range(t, sites, w, n, hi, first_end_at_or_after, ends, out);
    return out;
  }
  // Each site's rows in up to two parts in parallel, a difference array each.
  std::vector<std::int64_t> diffs[2] = {std::vector<std::int64_t>(std::size_t{n} + 1),
                                        std::vector<std::int64_t>(std::size_t{n} + 1)};
  for (std::size_t i = 0; i < sites.size(); ++i) {
    const auto [first, last] = t.site_rows(sites[i]);
    split_rows(static_cast<std::size_t>(last - first), [&](std::size_t b, std::size_t e, int part) {
      std::vector<std::int64_t>& diff = diffs[part];
      std::fill(diff.begin(), diff.end(), 0);
      RowReader reader(t, {kRowTime, kRowSize});
      for (const std::uint32_t* r = first + b; r != first + e; ++r) {
        reader.seek(*r);
        const std::uint64_t a = reader[kRowTime];
        if (a > w.to_ns) break;
        const std::uint64_t f = reader.free_ns();
        if (f <= w.from_ns) continue;
        // Live at ends[j] when a <= ends[j] < f.
        const std::uint32_t j0 = first_end_at_or_after(a);
        if (j0 == n || f <= ends[j0]) continue;  // freed before the next end: most short-lived blocks
        const std::uint32_t j1 = first_end_at_or_after(f);
        const auto size = static_cast<std::int64_t>(reader[kRowSize]);
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
