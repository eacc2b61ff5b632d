// The builder takes StackReplay's matches as they come (a free it matched to
// no block is unmatched, an allocation over a live block replaces that one)
// and follows its other rules (temporary is judged by the thread's last
// allocated address), so figures computed from the table equal the report's
// for any window.
#include "model/allocation_table.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <thread>

#include "common/parallel_for.h"

namespace memrec::analyzer {
namespace {

constexpr std::uint64_t kNoAddress = ~0ull;
// StackReplay counts ids this large under stack 0 (hostile input).
constexpr std::uint32_t kMaxStack = 1u << 26;

template <typename T>
std::uint64_t bytes_of(const std::vector<T>& v) {
  return v.capacity() * sizeof(T);
}
// A column's pages past its end were never touched: they take no memory.
template <typename T>
std::uint64_t bytes_of(const SpillColumn<T>& v) {
  return v.size() * sizeof(T);
}

}  // namespace

// The checkpoint block that holds the k-th free, then its bits, a word at a time.
std::uint32_t AllocationTable::rows_before_free(std::uint32_t k) const {
  const auto cp = std::upper_bound(checkpoints_.begin(), checkpoints_.end(), k,
                                   [](std::uint32_t key, const HeapCheckpoint& c) { return key < c.frees; });
  std::uint64_t p = std::uint64_t{static_cast<std::size_t>(cp - checkpoints_.begin()) - 1} * kCheckpointEvents;
  std::uint32_t left = k - (cp - 1)->frees;  // frees to pass before the k-th
  for (;;) {
    const std::uint64_t frees = ~order_[p >> 6] >> (p & 63);  // this word's events from p on; 1 a free
    const auto here = static_cast<std::uint32_t>(std::popcount(frees));
    if (left < here) {
      std::uint64_t f = frees;
      for (std::uint32_t i = 0; i < left; ++i) f &= f - 1;  // drop the frees passed
      p += static_cast<std::uint64_t>(std::countr_zero(f));
      return static_cast<std::uint32_t>(p - k);  // events before it, less the frees
    }
    left -= here;
    p += 64 - (p & 63);
  }
}

bool AllocationTable::replaced(std::uint32_t row) const {
  return std::binary_search(replaced_rows_.begin(), replaced_rows_.end(), row);
}

std::optional<std::uint32_t> AllocationTable::realloc_from(std::uint32_t row) const {
  const auto it = std::lower_bound(realloc_by_to_.begin(), realloc_by_to_.end(), std::pair{row, 0u});
  if (it == realloc_by_to_.end() || it->first != row) return std::nullopt;
  return it->second;
}

std::optional<std::uint32_t> AllocationTable::realloc_to(std::uint32_t row) const {
  const auto it = std::lower_bound(realloc_by_from_.begin(), realloc_by_from_.end(), std::pair{row, 0u});
  if (it == realloc_by_from_.end() || it->first != row) return std::nullopt;
  return it->second;
}

std::pair<const std::uint32_t*, const std::uint32_t*> AllocationTable::site_rows(std::uint32_t site) const {
  if (by_stack_) {
    if (site >= site_source_.size()) return {nullptr, nullptr};
    const std::uint32_t source = site_source_[site];
    const std::vector<std::uint32_t>& rows =
        (source & kMergedSite) != 0 ? merged_[source & ~kMergedSite].rows : stack_rows_[source];
    return {rows.data(), rows.data() + rows.size()};
  }
  if (site + 1 >= site_offsets_.size()) return {nullptr, nullptr};
  return {site_rows_.data() + site_offsets_[site], site_rows_.data() + site_offsets_[site + 1]};
}

std::optional<std::span<const AllocationTable::SiteSum>> AllocationTable::block_site_sums(std::size_t block) const {
  if (block + 1 >= sum_begin_.size()) return std::nullopt;
  const std::span<const SiteSum> sums(site_sums_.data() + sum_begin_[block], sum_begin_[block + 1] - sum_begin_[block]);
  if (sums.size() == 1 && sums[0].site == kNoSite) return std::nullopt;
  return sums;
}

// Two passes over the rows' stacks, each split in halves (in parallel) past
// a million rows: counting per site, then placing each row in its site's
// list (the second half after the first's rows of each site). Most of their
// time is the kernel making site_rows_' new pages: a 500 M-allocation dump's
// index took 6.6 s on one thread.
void AllocationTable::set_sites(const std::unordered_map<std::uint32_t, std::uint32_t>& site_of_stack,
                                std::uint32_t sites) {
  std::uint32_t max_stack = 0;
  for (const auto& [stack, site] : site_of_stack) max_stack = std::max(max_stack, stack);
  site_of_stack_.assign(std::size_t{max_stack} + 1, kNoSite);
  for (const auto& [stack, site] : site_of_stack) site_of_stack_[stack] = site < sites ? site : kNoSite;
  if (by_stack_) {
    set_sites_by_stack(sites);
    return;
  }
  const std::size_t blocks = rows_.blocks();
  const std::size_t parts = rows() >= (1u << 20) ? 2 : 1;
  const auto part_begin = [&](std::size_t p) { return blocks * p / parts; };
  const auto on_parts = [&](const auto& fn) { parallel_for(parts, worker_threads(), fn); };
  // Calls fn(row, site) for the rows of part p that have a site.
  const auto each_row = [&](std::size_t p, const auto& fn) {
    BlockReader reader(rows_, {kRowStack});
    for (std::size_t b = part_begin(p); b < part_begin(p + 1); ++b) {
      const std::uint32_t first = reader.load(b);
      const std::uint64_t* stacks = reader[kRowStack];
      const auto end = static_cast<std::uint32_t>(std::min<std::size_t>(rows() - first, kBlockValues));
      for (std::uint32_t i = 0; i < end; ++i) {
        const std::uint32_t s = this->site_of_stack(static_cast<std::uint32_t>(stacks[i]));
        if (s != kNoSite) fn(first + i, s);
      }
    }
  };
  std::vector<std::vector<std::uint32_t>> counts(parts, std::vector<std::uint32_t>(sites, 0));
  // The counting pass also sums each block's sizes by site: parts[p] holds
  // part p's blocks' entries, ends[p] where each block's end.
  std::vector<std::vector<SiteSum>> part_sums(parts);
  std::vector<std::vector<std::uint32_t>> part_ends(parts);
  on_parts([&](std::size_t p) {
    BlockReader reader(rows_, {kRowStack, kRowSize});
    std::vector<std::uint32_t>& count = counts[p];
    std::vector<SiteSum>& sums = part_sums[p];
    std::vector<std::uint64_t> bytes(sites, 0);
    std::vector<std::uint32_t> in_block(sites, 0);
    std::vector<std::uint32_t> seen;  // the block's sites
    for (std::size_t b = part_begin(p); b < part_begin(p + 1); ++b) {
      const std::uint32_t first = reader.load(b);
      const std::uint64_t* stacks = reader[kRowStack];
      const std::uint64_t* sizes = reader[kRowSize];
      const auto end = static_cast<std::uint32_t>(std::min<std::size_t>(rows() - first, kBlockValues));
      for (std::uint32_t i = 0; i < end; ++i) {
        const std::uint32_t s = this->site_of_stack(static_cast<std::uint32_t>(stacks[i]));
        if (s == kNoSite) continue;
        if (in_block[s]++ == 0) seen.push_back(s);
        bytes[s] += sizes[i];
      }
      std::sort(seen.begin(), seen.end());
      if (seen.size() > kMaxBlockSites) sums.push_back({kNoSite, 0, 0});
      for (const std::uint32_t s : seen) {
        if (seen.size() <= kMaxBlockSites) sums.push_back({s, in_block[s], bytes[s]});
        count[s] += in_block[s];
        in_block[s] = 0;
        bytes[s] = 0;
      }
      seen.clear();
      part_ends[p].push_back(static_cast<std::uint32_t>(sums.size()));
    }
  });
  sum_begin_.assign(1, 0);
  site_sums_.clear();
  for (std::size_t p = 0; p < parts; ++p) {
    const auto base = static_cast<std::uint32_t>(site_sums_.size());
    for (const std::uint32_t e : part_ends[p]) sum_begin_.push_back(base + e);
    site_sums_.insert(site_sums_.end(), part_sums[p].begin(), part_sums[p].end());
  }
  site_sums_.shrink_to_fit();
  site_offsets_.assign(std::size_t{sites} + 1, 0);
  for (std::uint32_t s = 0; s < sites; ++s) {
    std::uint32_t in_site = 0;
    for (std::size_t p = 0; p < parts; ++p) in_site += counts[p][s];
    site_offsets_[s + 1] = site_offsets_[s] + in_site;
  }
  // fill[p][s]: where part p's next row of site s goes.
  std::vector<std::vector<std::uint32_t>> fill(parts);
  for (std::size_t p = 0; p < parts; ++p) {
    fill[p].assign(site_offsets_.begin(), site_offsets_.end() - 1);
    for (std::size_t q = 0; q < p; ++q) {
      for (std::uint32_t s = 0; s < sites; ++s) fill[p][s] += counts[q][s];
    }
  }
  const std::size_t total = site_offsets_.back();
  site_rows_.resize_for_overwrite(total);
  on_parts([&](std::size_t p) {
    site_rows_.prepare(total * p / parts, total * (p + 1) / parts);
    std::vector<std::uint32_t>& f = fill[p];
    each_row(p, [&](std::uint32_t r, std::uint32_t s) { site_rows_[f[s]++] = r; });
  });
}

// Stacks without rows are left out of a site (they give it nothing), so a
// site's list is a stack's own far more often than a merged one.
void AllocationTable::set_sites_by_stack(std::uint32_t sites) {
  const std::vector<std::uint32_t>& dense = site_of_stack_;
  std::vector<std::vector<std::uint32_t>> stacks_of(sites);
  for (std::uint32_t stack = 0; stack < dense.size(); ++stack) {
    if (dense[stack] != kNoSite && stack < stack_rows_.size() && !stack_rows_[stack].empty()) {
      stacks_of[dense[stack]].push_back(stack);
    }
  }
  // A stack is in one site only: a merged list is found by its first stack.
  std::unordered_map<std::uint32_t, std::size_t> old_by_first;
  for (std::size_t i = 0; i < merged_.size(); ++i) {
    if (!merged_[i].stacks.empty()) old_by_first.emplace(merged_[i].stacks[0], i);
  }
  std::vector<MergedRows> merged;
  site_source_.assign(sites, 0);
  for (std::uint32_t site = 0; site < sites; ++site) {
    std::vector<std::uint32_t>& stacks = stacks_of[site];
    if (stacks.empty()) {
      site_source_[site] = kMergedSite | static_cast<std::uint32_t>(merged.size());
      merged.emplace_back();
      continue;
    }
    if (stacks.size() == 1) {
      site_source_[site] = stacks[0];
      continue;
    }
    // The list made for the same stacks at the last call, if any.
    MergedRows m;
    if (const auto old = old_by_first.find(stacks[0]);
        old != old_by_first.end() && merged_[old->second].stacks == stacks) {
      m = std::move(merged_[old->second]);
    } else {
      m.stacks = stacks;
      m.taken.assign(stacks.size(), 0);
    }
    // Every row taken since is newer than every row merged before: the new
    // rows are merged among themselves and appended.
    const std::size_t before = m.rows.size();
    for (std::size_t i = 0; i < stacks.size(); ++i) {
      const std::vector<std::uint32_t>& rows = stack_rows_[stacks[i]];
      m.rows.insert(m.rows.end(), rows.begin() + static_cast<std::ptrdiff_t>(m.taken[i]), rows.end());
      m.taken[i] = rows.size();
    }
    std::sort(m.rows.begin() + static_cast<std::ptrdiff_t>(before), m.rows.end());
    site_source_[site] = kMergedSite | static_cast<std::uint32_t>(merged.size());
    merged.push_back(std::move(m));
  }
  merged_ = std::move(merged);
}

std::uint64_t AllocationTable::memory_bytes() const {
  return rows_.memory_bytes() + bytes_of(free_ns_) + lifetimes_.memory_bytes() + bytes_of(temporary_) +
         frees_.memory_bytes() + bytes_of(order_) + bytes_of(realloc_by_from_) + bytes_of(realloc_by_to_) +
         bytes_of(realloc_rows_) + bytes_of(replaced_rows_) + bytes_of(unmatched_free_ns_) + bytes_of(replaced_ns_) +
         bytes_of(mmap_ns_) + bytes_of(site_offsets_) + bytes_of(site_rows_) + bytes_of(sum_begin_) +
         bytes_of(site_sums_) + bytes_of(skip_max_free_) + bytes_of(skip_max_temporary_free_) + bytes_of(checkpoints_) +
         bytes_of(site_of_stack_) + by_stack_bytes();
}

std::uint64_t AllocationTable::by_stack_bytes() const {
  std::uint64_t bytes = bytes_of(site_source_) + bytes_of(stack_rows_);
  for (const auto& rows : stack_rows_) bytes += bytes_of(rows);
  for (const MergedRows& m : merged_) bytes += bytes_of(m.stacks) + bytes_of(m.taken) + bytes_of(m.rows);
  return bytes;
}

void AllocationTableBuilder::on_tagged_events(std::span<const HeapEvent> events,
                                              std::span<const std::uint32_t> released, std::uint32_t thread) {
  for (std::size_t i = 0; i < events.size(); ++i) take(events[i], thread, released[i]);
}

void AllocationTableBuilder::on_tagged_merged(std::span<const HeapEvent> events,
                                              std::span<const std::uint32_t> released,
                                              std::span<const std::uint32_t> threads) {
  for (std::size_t i = 0; i < events.size(); ++i) take(events[i], threads[i], released[i]);
}

void AllocationTableBuilder::take(const HeapEvent& e, std::uint32_t thread, std::uint32_t released) {
  if (full_) return;
  // A tag names a row allocated before; anything else would write past the
  // columns, so it releases nothing.
  if (released != kNoRow && released >= t_.rows()) released = kNoRow;
  // The merged order never goes back in time; a hostile dump that does must
  // not break the sorted columns the queries search.
  last_time_ns_ = std::max(last_time_ns_, e.time_ns);
  if (e.op != HeapOp::kAlloc && e.op != HeapOp::kFree) {
    t_.mmap_ns_.push_back(last_time_ns_);  // anonymous memory is not heap
    return;
  }
  if (thread >= last_addr_.size()) {
    last_addr_.resize(std::size_t{thread} + 1, kNoAddress);
    realloc_pending_.resize(std::size_t{thread} + 1, kNoRow);
  }
  if (e.op == HeapOp::kAlloc) {
    if (t_.rows() >= max_rows_) {
      full_ = true;
      return;
    }
    on_alloc(e, thread, released);
  } else {
    on_free(e, thread, released);
  }
}

void AllocationTableBuilder::release(std::uint32_t row, std::uint64_t time_ns) {
  HeapCheckpoint& cp = begin_event(false);
  t_.free_ns_[row] = time_ns;
  t_.frees_.push({time_ns, row});
  if (!t_.by_stack_ && --coded_live_[row / kBlockValues] == 0 && t_.rows() >= (row / kBlockValues + 1) * kBlockValues) {
    seal_lifetimes(row / kBlockValues);
  }
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  // Times never go back: a block's last free is its latest (kNeverFreed
  // while a row of it is live, so a growing table is always exact).
  if (--block_live_[row / kS] == 0) t_.skip_max_free_[row / kS] = time_ns;
  heap_bytes_ -= t_.size(row);
  --live_count_;
  cp.block_max_bytes = std::max(cp.block_max_bytes, heap_bytes_);
}

// An event's bit in the merged order, and the checkpoint of the block of
// events it belongs to.
HeapCheckpoint& AllocationTableBuilder::begin_event(bool alloc) {
  checkpoint();
  const std::uint64_t p = t_.events();
  if (p % 64 == 0) t_.order_.push_back(0);
  if (alloc) t_.order_[p / 64] |= 1ull << (p % 64);
  return t_.checkpoints_.back();
}

// A new checkpoint every kCheckpointEvents events, with the heap before the next.
void AllocationTableBuilder::checkpoint() {
  // Not twice for one position: publish() may have made it already.
  constexpr std::uint32_t kC = AllocationTable::kCheckpointEvents;
  if (t_.events() % kC == 0 && t_.checkpoints_.size() == t_.events() / kC) {
    t_.checkpoints_.push_back(HeapCheckpoint{static_cast<std::uint32_t>(t_.rows()),
                                             static_cast<std::uint32_t>(t_.frees()), heap_bytes_, live_count_, 0, 0, 0,
                                             temporary_frees_});
  }
}

void AllocationTableBuilder::on_alloc(const HeapEvent& e, std::uint32_t thread, std::uint32_t replaced) {
  const auto row = static_cast<std::uint32_t>(t_.rows());
  if (replaced != kNoRow) {
    release(replaced, last_time_ns_);
    t_.replaced_rows_.push_back(replaced);
    t_.replaced_ns_.push_back(last_time_ns_);
  }
  HeapCheckpoint& cp = begin_event(true);
  heap_bytes_ += e.size;
  ++live_count_;
  if (heap_bytes_ > cp.block_max_alloc_bytes) {
    cp.block_max_alloc_bytes = heap_bytes_;
    cp.block_max_alloc_at = static_cast<std::uint32_t>(t_.events() % AllocationTable::kCheckpointEvents);
  }
  cp.block_max_bytes = std::max(cp.block_max_bytes, heap_bytes_);
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  if (row % kS == 0) {
    t_.skip_max_free_.push_back(0);
    t_.skip_max_temporary_free_.push_back(0);
    block_live_.push_back(0);
  }
  ++block_live_[row / kS];
  if (!t_.by_stack_) {
    if (row % kBlockValues == 0) coded_live_.push_back(0);
    ++coded_live_[row / kBlockValues];
  }
  t_.skip_max_free_[row / kS] = kNeverFreed;
  t_.free_ns_.push_back(kNeverFreed);
  if (row % 64 == 0) t_.temporary_.push_back(0);
  const std::uint32_t stack = e.stack.value < kMaxStack ? e.stack.value : 0;
  if (t_.by_stack_) {
    if (stack >= t_.stack_rows_.size()) t_.stack_rows_.resize(std::size_t{stack} + 1);
    t_.stack_rows_[stack].push_back(row);
  }
  t_.rows_.push({last_time_ns_, e.size, stack, e.addr, thread});
  last_addr_[thread] = e.addr;
  if (e.realloc && realloc_pending_[thread] != kNoRow) {
    t_.realloc_by_to_.emplace_back(row, realloc_pending_[thread]);
  }
  realloc_pending_[thread] = kNoRow;
}

void AllocationTableBuilder::on_free(const HeapEvent& e, std::uint32_t thread, std::uint32_t row) {
  realloc_pending_[thread] = kNoRow;
  if (row == kNoRow) {
    t_.unmatched_free_ns_.push_back(last_time_ns_);
    return;
  }
  const bool temporary = last_addr_[thread] == e.addr;
  if (temporary) {
    last_addr_[thread] = kNoAddress;
    t_.temporary_[row / 64] |= 1ull << (row % 64);
  }
  release(row, last_time_ns_);  // its checkpoint holds the count before this free
  if (temporary) {
    ++temporary_frees_;
    t_.skip_max_temporary_free_[row / AllocationTable::kSkipRows] = last_time_ns_;  // times never go back
  }
  if (e.realloc) realloc_pending_[thread] = row;
}

// A block's lifetimes, coded when its rows are all freed (their free times
// are still in the cache) or at finish().
void AllocationTableBuilder::seal_lifetimes(std::size_t block) {
  BlockValues times;
  BlockValues lives;
  const std::uint64_t* alloc = t_.rows_.read(kRowTime, block, times);
  const std::size_t first = block * kBlockValues;
  const std::size_t n = std::min<std::size_t>(kBlockValues, t_.rows() - first);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t f = t_.free_ns_[first + i];
    lives[i] = f == kNeverFreed ? 0 : f - alloc[i] + 1;
  }
  t_.lifetimes_.seal(block, lives.data(), n);
}

AllocationTable AllocationTableBuilder::finish() {
  AllocationTable& t = t_;
  checkpoint();                                // the state after the last event, when it ends a block
  block_live_ = std::vector<std::uint16_t>();  // not `= {}`, which keeps the room
  if (!t.by_stack_) {
    for (std::size_t b = 0; b < t.rows_.blocks(); ++b) {
      if (!t.lifetimes_.sealed(b)) seal_lifetimes(b);
    }
    t.free_ns_ = SpillColumn<std::uint64_t>();
    t.lifetimes_sealed_ = true;
    coded_live_ = std::vector<std::uint16_t>();
  }
  t.realloc_by_from_.reserve(t.realloc_by_to_.size());
  for (const auto& [to, from] : t.realloc_by_to_) t.realloc_by_from_.emplace_back(from, to);
  std::sort(t.realloc_by_from_.begin(), t.realloc_by_from_.end());
  t.realloc_rows_.reserve(t.realloc_by_to_.size() * 2);
  for (const auto& [to, from] : t.realloc_by_to_) t.realloc_rows_.insert(t.realloc_rows_.end(), {to, from});
  std::sort(t.realloc_rows_.begin(), t.realloc_rows_.end());
  t.realloc_rows_.erase(std::unique(t.realloc_rows_.begin(), t.realloc_rows_.end()), t.realloc_rows_.end());
  t.realloc_rows_.shrink_to_fit();
  std::sort(t.replaced_rows_.begin(), t.replaced_rows_.end());
  return std::move(t_);
}

namespace {

// Sorts v's elements from `sorted` on and merges them into the sorted ones
// before, moving only those after the first place a new one goes.
template <typename T>
typename std::vector<T>::iterator merge_tail(std::vector<T>& v, std::size_t sorted) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(sorted);
  std::sort(mid, v.end());
  if (mid == v.end()) return mid;
  const auto from = std::upper_bound(v.begin(), mid, *mid);
  std::inplace_merge(from, mid, v.end());
  return from;
}

}  // namespace

AllocationTable& AllocationTableBuilder::publish() {
  AllocationTable& t = t_;
  checkpoint();
  for (std::size_t i = published_reallocs_; i < t.realloc_by_to_.size(); ++i) {
    const auto [to, from] = t.realloc_by_to_[i];
    t.realloc_by_from_.emplace_back(from, to);
    t.realloc_rows_.insert(t.realloc_rows_.end(), {to, from});
  }
  merge_tail(t.realloc_by_from_, published_reallocs_);
  const std::size_t rows_sorted = t.realloc_rows_.size() - 2 * (t.realloc_by_to_.size() - published_reallocs_);
  auto from = merge_tail(t.realloc_rows_, rows_sorted);
  if (from != t.realloc_rows_.begin()) --from;  // the one before may equal the first new
  t.realloc_rows_.erase(std::unique(from, t.realloc_rows_.end()), t.realloc_rows_.end());
  published_reallocs_ = t.realloc_by_to_.size();
  merge_tail(t.replaced_rows_, published_replaced_);
  published_replaced_ = t.replaced_rows_.size();
  return t;
}

}  // namespace memrec::analyzer
