// The filtered, sorted pages of rows of /allocations: counts per chunk for
// time order, a heap near the front, a narrowing histogram deeper in.
#include "model/allocation_pages.h"

#include <algorithm>
#include <bit>

#include "common/parallel_for.h"
#include "model/heap_cursor.h"

namespace memrec::analyzer {

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
  // A row allocated after the instant is not alive at it: the rows past it
  // are not candidates (each would be read only to fail the filter).
  const std::uint32_t hi = f.rows.alive_at_ns ? std::min(f.hi, rows_until(t, *f.rows.alive_at_ns)) : f.hi;
  if (f.realloc || f.site) {
    const auto [first, last] = list;
    c.list = first;
    c.begin = static_cast<std::uint32_t>(std::lower_bound(first, last, f.lo) - first);
    c.end = std::max(c.begin, static_cast<std::uint32_t>(std::lower_bound(first, last, hi) - first));
  } else {
    c.begin = f.lo;
    c.end = std::max(f.lo, hi);
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
