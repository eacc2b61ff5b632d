// The builder follows StackReplay's rules event for event (a free of an unknown
// address is unmatched, an allocation over a live block replaces it, temporary
// is judged by the thread's last allocated address), so figures computed from
// the table equal the report's for any window.
#include "model/allocation_table.h"

#include <algorithm>
#include <limits>

#include "model/address_map.h"

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

std::uint64_t AllocationTable::address(std::uint32_t row) const {
  const std::uint64_t a = meta_[row] & kAddrMask;
  return a != kAddrMask ? a : big_addrs_.at(row);
}

std::uint32_t AllocationTable::thread(std::uint32_t row) const {
  const auto t = static_cast<std::uint32_t>((meta_[row] >> kAddrBits) & kThreadMask);
  return t != kThreadMask ? t : big_threads_.at(row);
}

std::optional<std::uint32_t> AllocationTable::free_exception(std::uint32_t k) const {
  const auto* it = std::lower_bound(free_exceptions_.begin(), free_exceptions_.end(), k,
                                    [](const FreeException& e, std::uint32_t key) { return e.k < key; });
  if (it == free_exceptions_.end() || it->k != k) return std::nullopt;
  return it->rows;
}

std::uint32_t AllocationTable::rows_before_free(std::uint32_t k) const {
  if (!free_after_.empty()) return free_after_[k];
  if (const auto e = free_exception(k)) return *e;
  const std::uint64_t time = free_time(k);
  std::uint32_t lo = 0;
  auto hi = static_cast<std::uint32_t>(rows());
  while (lo < hi) {  // the first row allocated at or after `time`
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (alloc_ns(mid) < time) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
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
  if (site + 1 >= site_offsets_.size()) return {nullptr, nullptr};
  return {site_rows_.data() + site_offsets_[site], site_rows_.data() + site_offsets_[site + 1]};
}

void AllocationTable::set_sites(const std::unordered_map<std::uint32_t, std::uint32_t>& site_of_stack,
                                std::uint32_t sites) {
  std::uint32_t max_stack = 0;
  for (const auto& [stack, site] : site_of_stack) max_stack = std::max(max_stack, stack);
  std::vector<std::uint32_t> dense(std::size_t{max_stack} + 1, kNoSite);
  for (const auto& [stack, site] : site_of_stack) dense[stack] = site < sites ? site : kNoSite;
  site_offsets_.assign(std::size_t{sites} + 1, 0);
  for (std::uint32_t& s : site_) {
    s = s < dense.size() ? dense[s] : kNoSite;
    if (s != kNoSite) ++site_offsets_[s + 1];
  }
  for (std::size_t i = 1; i < site_offsets_.size(); ++i) site_offsets_[i] += site_offsets_[i - 1];
  site_rows_.assign(site_offsets_.back(), 0);
  std::vector<std::uint32_t> fill(site_offsets_.begin(), site_offsets_.end() - 1);
  for (std::uint32_t r = 0; r < site_.size(); ++r) {
    if (site_[r] != kNoSite) site_rows_[fill[site_[r]]++] = r;
  }
}

std::uint64_t AllocationTable::memory_bytes() const {
  const std::uint64_t sparse = (big_sizes_.size() + big_addrs_.size() + big_threads_.size()) * 32;
  return bytes_of(alloc_base_) + bytes_of(alloc_delta_) + bytes_of(alloc_wide_) + bytes_of(free_ns_) + bytes_of(size_) +
         bytes_of(site_) + bytes_of(meta_) + bytes_of(free_order_) + bytes_of(free_exceptions_) +
         bytes_of(free_after_) + sparse + bytes_of(realloc_by_from_) + bytes_of(realloc_by_to_) +
         bytes_of(realloc_rows_) + bytes_of(replaced_rows_) + bytes_of(unmatched_free_ns_) + bytes_of(replaced_ns_) +
         bytes_of(mmap_ns_) + bytes_of(site_offsets_) + bytes_of(site_rows_) + bytes_of(skip_max_free_) +
         bytes_of(checkpoints_);
}

void AllocationTableBuilder::on_event(const HeapEvent& e, std::uint32_t thread) {
  if (full_) return;
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
    on_alloc(e, thread);
  } else {
    on_free(e, thread);
  }
}

// Every free's rows before it, for now: finish() keeps them all, or only
// the exceptions (keep_exceptions).
void AllocationTableBuilder::release(std::uint32_t row, std::uint64_t time_ns) {
  t_.free_ns_[row] = time_ns;
  t_.free_order_.push_back(row);
  free_after_.push_back(static_cast<std::uint32_t>(t_.rows()));
}

// Times go straight into their packed form, a base per kTimeBlock rows and
// a 32-bit delta, instead of a column of full times packed at the end: 8
// bytes an allocation less to write (on a 500 M-allocation dump, 4 GB of
// the spill files) and no pass over them.
void AllocationTableBuilder::add_time(std::uint32_t row, std::uint64_t time_ns) {
  constexpr std::uint32_t kB = AllocationTable::kTimeBlock;
  if (row % kB == 0) {
    close_time_block();
    t_.alloc_base_.push_back(time_ns);
    block_wide_ = false;
  }
  block_ns_[row % kB] = time_ns;
  const std::uint64_t delta = time_ns - block_ns_[0];
  if (delta > std::numeric_limits<std::uint32_t>::max()) block_wide_ = true;
  t_.alloc_delta_.push_back(static_cast<std::uint32_t>(delta));
}

// A block that spans 2^32 ns or more keeps its rows' full times.
void AllocationTableBuilder::close_time_block() {
  if (!block_wide_) return;
  constexpr std::uint32_t kB = AllocationTable::kTimeBlock;
  const std::size_t block = t_.alloc_base_.size() - 1;
  const std::size_t n = t_.rows() - block * kB;
  t_.alloc_base_[block] = t_.alloc_wide_.size() | 1ull << 63;
  t_.alloc_wide_.insert(t_.alloc_wide_.end(), block_ns_, block_ns_ + n);
  block_wide_ = false;
}

// A free sorts before every row allocated at or after its time unless the
// replay put it later (a thread's own alloc then free at one ns). Where
// those exceptions are most frees (a clock coarser than the allocator),
// every free's count stays (4 bytes a free); else only the exceptions (8
// bytes each). Free times never decrease, so one sweep of a cursor over the
// rows finds them, and it stops once they are too many to keep.
void AllocationTableBuilder::keep_exceptions() {
  AllocationTable& t = t_;
  std::uint32_t by_time = 0;  // rows allocated before the k-th free's time
  for (std::uint32_t k = 0; k < t.frees(); ++k) {
    while (by_time < t.rows() && t.alloc_ns(by_time) < t.free_time(k)) ++by_time;
    if (free_after_[k] == by_time) continue;
    t.free_exceptions_.push_back({k, free_after_[k]});
    if (t.free_exceptions_.size() * 2 > t.frees()) {
      t.free_exceptions_ = {};
      t.free_after_ = std::move(free_after_);
      return;
    }
  }
  free_after_ = {};
}

void AllocationTableBuilder::on_alloc(const HeapEvent& e, std::uint32_t thread) {
  const auto row = static_cast<std::uint32_t>(t_.rows());
  // AddressMap's `size` field carries the row here.
  if (const auto old = live_.insert(e.addr, LiveBlock{row, StackId{}, 0})) {
    const auto old_row = static_cast<std::uint32_t>(old->size);
    release(old_row, last_time_ns_);
    t_.replaced_rows_.push_back(old_row);
    t_.replaced_ns_.push_back(last_time_ns_);
  }
  add_time(row, last_time_ns_);
  t_.free_ns_.push_back(kNeverFreed);
  if (e.size >= AllocationTable::kBigSize) t_.big_sizes_.emplace(row, e.size);
  t_.size_.push_back(static_cast<std::uint32_t>(std::min<std::uint64_t>(e.size, AllocationTable::kBigSize)));
  t_.site_.push_back(e.stack.value < kMaxStack ? e.stack.value : 0);
  std::uint64_t addr = e.addr;
  if (addr >= AllocationTable::kAddrMask) {
    t_.big_addrs_.emplace(row, addr);
    addr = AllocationTable::kAddrMask;
  }
  std::uint64_t th = thread;
  if (th >= AllocationTable::kThreadMask) {
    t_.big_threads_.emplace(row, thread);
    th = AllocationTable::kThreadMask;
  }
  t_.meta_.push_back(addr | th << AllocationTable::kAddrBits);
  last_addr_[thread] = e.addr;
  if (e.realloc && realloc_pending_[thread] != kNoRow) {
    t_.realloc_by_to_.emplace_back(row, realloc_pending_[thread]);
  }
  realloc_pending_[thread] = kNoRow;
}

void AllocationTableBuilder::on_free(const HeapEvent& e, std::uint32_t thread) {
  realloc_pending_[thread] = kNoRow;
  const auto block = live_.erase(e.addr);
  if (!block) {
    t_.unmatched_free_ns_.push_back(last_time_ns_);
    return;
  }
  const auto row = static_cast<std::uint32_t>(block->size);
  if (last_addr_[thread] == e.addr) {
    last_addr_[thread] = kNoAddress;
    t_.meta_[row] |= 1ull << 63;
  }
  release(row, last_time_ns_);
  if (e.realloc) realloc_pending_[thread] = row;
}

// One walk over the merged sequence: the exact heap every kCheckpointEvents
// events and the highest it reaches in between.
void AllocationTableBuilder::build_checkpoints() {
  AllocationTable& t = t_;
  const std::uint64_t n = t.events();
  constexpr std::uint32_t kC = AllocationTable::kCheckpointEvents;
  t.checkpoints_.reserve(n / kC + 2);
  std::uint32_t i = 0;
  std::uint32_t k = 0;
  std::uint64_t heap = 0;
  std::uint64_t count = 0;
  for (std::uint64_t p = 0; p < n; ++p) {
    if (p % kC == 0) t.checkpoints_.push_back(HeapCheckpoint{i, k, heap, count, 0, 0, 0});
    HeapCheckpoint& cp = t.checkpoints_.back();
    if (k < t.free_order_.size() && t.free_comes_first(k, i)) {
      heap -= t.size(t.free_order_[k++]);
      --count;
    } else {
      heap += t.size(i++);
      ++count;
      if (heap > cp.block_max_alloc_bytes) {
        cp.block_max_alloc_bytes = heap;
        cp.block_max_alloc_at = static_cast<std::uint32_t>(p % kC);
      }
    }
    cp.block_max_bytes = std::max(cp.block_max_bytes, heap);
  }
  if (n % kC == 0) t.checkpoints_.push_back(HeapCheckpoint{i, k, heap, count, 0, 0, 0});
}

AllocationTable AllocationTableBuilder::finish() {
  close_time_block();
  keep_exceptions();
  build_checkpoints();
  AllocationTable& t = t_;
  constexpr std::uint32_t kS = AllocationTable::kSkipRows;
  t.skip_max_free_.assign((t.rows() + kS - 1) / kS, 0);
  for (std::size_t r = 0; r < t.rows(); ++r) {
    t.skip_max_free_[r / kS] = std::max(t.skip_max_free_[r / kS], t.free_ns_[r]);
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

}  // namespace memrec::analyzer
