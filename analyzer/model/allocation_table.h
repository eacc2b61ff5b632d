// Every heap allocation of one dump as columns, for `memrec view`'s range and
// instant queries (model/heap_cursor.h, window_figures.h, allocation_pages.h). Filled beside view's replay,
// which hands it each event with the row it released (rows in the merged
// order of their allocation); `report` never builds it: its model stays the
// streaming StackReplay.
// The columns a row never changes are coded in blocks (model/column_blocks.h);
// the rest are SpillColumns: files the kernel pages out when a spill
// directory is set (docs/api.md "The allocation table" gives the bytes).
// A followed dump's table grows: its builder publishes it after each poll
// (AllocationTableBuilder::publish, docs/design/allocation_table.md "Growing").
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "load/heap_event.h"
#include "load/ordered_events.h"
#include "model/address_map.h"
#include "model/column_blocks.h"
#include "model/sealed_blocks.h"
#include "model/spill_column.h"

namespace memrec::analyzer {

inline constexpr std::uint64_t kNeverFreed = std::numeric_limits<std::uint64_t>::max();
inline constexpr std::uint32_t kNoSite = std::numeric_limits<std::uint32_t>::max();

// The columns of AllocationTable::row_blocks(), set once a row is written.
enum RowColumn : std::size_t { kRowTime, kRowSize, kRowStack, kRowAddress, kRowThread };
// The columns of AllocationTable::free_blocks(): the k-th free's time and row.
enum FreeColumn : std::size_t { kFreeTime, kFreeRow };

// The state after a prefix of the merged event sequence, saved every
// kCheckpointEvents events, with the highest heap reached in the block of
// events that follows it.
struct HeapCheckpoint {
  std::uint32_t rows = 0;   // allocations done
  std::uint32_t frees = 0;  // frees done (free_order prefix)
  std::uint64_t heap_bytes = 0;
  std::uint64_t live_count = 0;
  std::uint64_t block_max_bytes = 0;        // the highest heap after any event of the block
  std::uint64_t block_max_alloc_bytes = 0;  // ... after an allocation of the block (0: none)
  std::uint32_t block_max_alloc_at = 0;     // the event after which that was first reached
  std::uint32_t temporary_frees = 0;        // frees done of temporary rows
};

class AllocationTable {
 public:
  static constexpr std::uint32_t kCheckpointEvents = 1024;
  static constexpr std::uint32_t kSkipRows = 256;  // rows per entry of the skip index

  std::size_t rows() const { return rows_.size(); }
  std::size_t frees() const { return frees_.size(); }
  std::uint64_t events() const { return rows() + frees(); }

  // Absolute CLOCK_MONOTONIC ns, as in the dump.
  // Each of these reads the row's block through a small per-thread cache of
  // decoded blocks; a scan of many rows reads whole blocks (row_blocks()).
  std::uint64_t alloc_ns(std::uint32_t row) const { return rows_.get(kRowTime, row); }
  // kNeverFreed: live at the end.
  std::uint64_t free_ns(std::uint32_t row) const {
    if (!lifetimes_sealed_) return free_ns_[row];
    const std::uint64_t life = lifetimes_.get(row);
    return life == 0 ? kNeverFreed : alloc_ns(row) + (life - 1);
  }
  std::uint64_t size(std::uint32_t row) const { return rows_.get(kRowSize, row); }
  // kNoSite before set_sites.
  std::uint32_t site(std::uint32_t row) const { return site_of_stack(stack(row)); }
  std::uint64_t address(std::uint32_t row) const { return rows_.get(kRowAddress, row); }
  // LoadedDump::threads index
  std::uint32_t thread(std::uint32_t row) const { return static_cast<std::uint32_t>(rows_.get(kRowThread, row)); }
  // Freed by its own thread before that thread allocated again (the report's "temporary").
  bool temporary(std::uint32_t row) const { return ((temporary_[row >> 6] >> (row & 63)) & 1) != 0; }
  // The RowColumns by block of kBlockValues rows, for scans (BlockReader).
  const ColumnBlocks& row_blocks() const { return rows_; }
  // A site of the stack (kNoSite before set_sites or if none).
  std::uint32_t site_of_stack(std::uint32_t stack) const {
    return stack < site_of_stack_.size() ? site_of_stack_[stack] : kNoSite;
  }
  // Its "free" was another allocation at its address (the real free was not recorded).
  bool replaced(std::uint32_t row) const;

  // The k-th free in merged order: its row and time.
  std::uint32_t free_row(std::uint32_t k) const { return static_cast<std::uint32_t>(frees_.get(kFreeRow, k)); }
  std::uint64_t free_time(std::uint32_t k) const { return frees_.get(kFreeTime, k); }
  // A finished table's lifetimes by row block (free − allocation + 1, 0
  // never freed); none while the table grows (free_ns reads its raw column).
  const SealedBlocks* lifetime_blocks() const { return lifetimes_sealed_ ? &lifetimes_ : nullptr; }
  // The frees in merged order by block of kBlockValues (FreeColumn), for walks and searches.
  const ColumnBlocks& free_blocks() const { return frees_; }
  // Whether the event at `position` of the merged sequence (rows and frees
  // before it) is an allocation. The replay's order is kept as it was, a bit
  // an event, so the merge is exact also where times tie (a thread's malloc
  // and free within one ns, or on one tick of a single thread's dump).
  bool is_alloc_at(std::uint64_t position) const { return ((order_[position >> 6] >> (position & 63)) & 1) != 0; }
  // How many rows were allocated before the k-th free in merged order.
  std::uint32_t rows_before_free(std::uint32_t k) const;

  // Realloc links: the row a realloc replaced, and the row that replaced it.
  std::optional<std::uint32_t> realloc_from(std::uint32_t row) const;
  std::optional<std::uint32_t> realloc_to(std::uint32_t row) const;
  // Every row of a realloc chain (made by a realloc or replaced by one), ascending.
  const std::vector<std::uint32_t>& realloc_rows() const { return realloc_rows_; }

  const std::vector<std::uint64_t>& unmatched_free_ns() const { return unmatched_free_ns_; }  // sorted
  const std::vector<std::uint64_t>& replaced_ns() const { return replaced_ns_; }              // sorted
  // Anonymous-memory events: not heap, but one opens a report's window (its peak candidate).
  const std::vector<std::uint64_t>& mmap_ns() const { return mmap_ns_; }  // sorted

  // Per-site rows (CSR), ascending, so also by allocation time.
  std::pair<const std::uint32_t*, const std::uint32_t*> site_rows(std::uint32_t site) const;
  std::size_t sites() const {
    if (by_stack_) return site_source_.size();
    return site_offsets_.empty() ? 0 : site_offsets_.size() - 1;
  }

  // Per row block (kBlockValues rows), the allocations and bytes of each
  // site it has rows of, ascending by site: whole blocks of a range's
  // per-site allocations need no decoding (site_allocations). Set by
  // set_sites; none for a growing table, nor for a block of more than
  // kMaxBlockSites sites (its columns are read instead).
  struct SiteSum {
    std::uint32_t site = 0;
    std::uint32_t count = 0;
    std::uint64_t bytes = 0;
  };
  static constexpr std::uint32_t kMaxBlockSites = 64;
  std::optional<std::span<const SiteSum>> block_site_sums(std::size_t block) const;

  const std::vector<HeapCheckpoint>& checkpoints() const { return checkpoints_; }
  // The latest free time among rows [i × kSkipRows, (i + 1) × kSkipRows).
  std::uint64_t skip_max_free(std::size_t i) const { return skip_max_free_[i]; }
  // The latest free time among the temporary rows of that block (0: none).
  std::uint64_t skip_max_temporary_free(std::size_t i) const { return skip_max_temporary_free_[i]; }

  // The stack id of each row; set_sites maps stacks to sites.
  std::uint32_t stack(std::uint32_t row) const { return static_cast<std::uint32_t>(rows_.get(kRowStack, row)); }
  // Maps every row's stack id to its call site (kNoSite if not in `site_of_stack`)
  // and builds the per-site index; `sites` is the number of sites. A growing
  // table (AllocationTableBuilder's Growing) keeps its rows' stack ids and
  // maps them at each call instead: the cost is its stacks', plus the new
  // rows of sites of several stacks, never the history's; call it again after
  // every publish().
  void set_sites(const std::unordered_map<std::uint32_t, std::uint32_t>& site_of_stack, std::uint32_t sites);

  // Bytes held, all columns and indexes included.
  std::uint64_t memory_bytes() const;

 private:
  friend class AllocationTableBuilder;
  static constexpr std::uint32_t kMergedSite = 1u << 31;  // site_source_: an index into merged_

  void set_sites_by_stack(std::uint32_t sites);
  std::uint64_t by_stack_bytes() const;

  ColumnBlocks rows_{Coding::kAscending, Coding::kPlain, Coding::kPlain, Coding::kZigzagDelta, Coding::kPlain};
  // Free times by row as they come; a finished table codes them as
  // lifetimes by row block (free − allocation + 1, 0 never freed), each
  // block once its rows are all freed, the rest at finish(), and drops them.
  SpillColumn<std::uint64_t> free_ns_;
  SealedBlocks lifetimes_;
  bool lifetimes_sealed_ = false;
  SpillColumn<std::uint64_t> temporary_;                          // bit r: row r is temporary
  ColumnBlocks frees_{Coding::kAscending, Coding::kZigzagDelta};  // FreeColumn
  SpillColumn<std::uint64_t> order_;  // bit p of the merged sequence: 1 an allocation, 0 a free
  std::vector<std::pair<std::uint32_t, std::uint32_t>> realloc_by_from_;  // (from, to), sorted
  std::vector<std::pair<std::uint32_t, std::uint32_t>> realloc_by_to_;    // (to, from), sorted
  std::vector<std::uint32_t> realloc_rows_;                               // sorted, unique
  std::vector<std::uint32_t> replaced_rows_;                              // sorted
  std::vector<std::uint64_t> unmatched_free_ns_;
  std::vector<std::uint64_t> replaced_ns_;
  std::vector<std::uint64_t> mmap_ns_;
  std::vector<std::uint32_t> site_offsets_;
  SpillColumn<std::uint32_t> site_rows_;
  // By row block: its first entry of site_sums_, then the end. A block not
  // summed holds one entry of site kNoSite.
  std::vector<std::uint32_t> sum_begin_;
  std::vector<SiteSum> site_sums_;
  std::vector<std::uint64_t> skip_max_free_;
  std::vector<std::uint64_t> skip_max_temporary_free_;
  std::vector<HeapCheckpoint> checkpoints_;

  // A growing table's site index: each stack its rows;
  // a site of one stack reads that stack's list, a site of several a merged
  // list, brought up to date at each set_sites by merging only the new rows.
  struct MergedRows {
    std::vector<std::uint32_t> stacks;  // ascending
    std::vector<std::size_t> taken;     // by stack: its rows merged so far
    std::vector<std::uint32_t> rows;    // ascending
  };
  bool by_stack_ = false;
  std::vector<std::uint32_t> site_of_stack_;            // by stack id (either table)
  std::vector<std::vector<std::uint32_t>> stack_rows_;  // by stack id: its rows, ascending
  std::vector<MergedRows> merged_;
  std::vector<std::uint32_t> site_source_;  // by site: a stack id, or kMergedSite | an index into merged_
};

// The sink that fills a table beside the replay (build_heap_report's
// `also`): its tags are StackReplay's matches, the row each event released,
// so it keeps no address map of its own. finish() sorts the realloc links;
// every other index is kept as the events come.
class AllocationTableBuilder final : public TaggedEventSink {
 public:
  // Rows are 32-bit (kNoRow is none): a dump of more allocations than that
  // (about 17 GB of bench/churn) cannot be held.
  static constexpr std::uint64_t kMaxRows = kNoRow - 1;

  // `max_rows`: tests lower it.
  explicit AllocationTableBuilder(std::uint64_t max_rows = kMaxRows) : max_rows_(max_rows) {}
  // A table that is read between batches of events (a followed dump): see publish().
  struct Growing {};
  explicit AllocationTableBuilder(Growing, std::uint64_t max_rows = kMaxRows) : max_rows_(max_rows) {
    t_.by_stack_ = true;
  }

  void on_tagged_events(std::span<const HeapEvent> events, std::span<const std::uint32_t> released,
                        std::uint32_t thread) override;
  void on_tagged_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> released,
                        std::span<const std::uint32_t> threads) override;
  // Whether the dump had more allocations than max_rows: the table stopped
  // at them and took no event after; callers refuse it (view, export).
  bool full() const { return full_; }
  AllocationTable finish();
  // A Growing builder's table as of the events taken so far, every query
  // exact for them; the builder keeps filling it afterwards. Costs the
  // events taken since the last publish (their realloc and replaced rows
  // are merged into the sorted lists from the oldest row they name on). The
  // caller must keep readers out while the builder takes events and
  // publishes, and call set_sites after.
  AllocationTable& publish();

 private:
  // `released`: the row the event released (StackReplay::released_row()).
  void take(const HeapEvent& e, std::uint32_t thread, std::uint32_t released);
  void on_alloc(const HeapEvent& e, std::uint32_t thread, std::uint32_t replaced);
  void on_free(const HeapEvent& e, std::uint32_t thread, std::uint32_t freed);
  void release(std::uint32_t row, std::uint64_t time_ns);
  HeapCheckpoint& begin_event(bool alloc);
  void checkpoint();
  void seal_lifetimes(std::size_t block);

  AllocationTable t_;
  std::uint64_t max_rows_;
  bool full_ = false;
  std::vector<std::uint64_t> last_addr_;        // by thread: its latest allocated address, while live
  std::vector<std::uint32_t> realloc_pending_;  // by thread: the row its realloc just freed
  std::uint64_t last_time_ns_ = 0;
  // The indexes are kept as the events come, while their rows are in the
  // cache: built at finish() they were passes over the whole table, with
  // random reads of spilled columns (a 500 M-allocation dump: 6 s of a
  // 125 s load, on one thread).
  std::vector<std::uint16_t> block_live_;  // by kSkipRows block: its rows not freed yet
  std::vector<std::uint16_t> coded_live_;  // by kBlockValues block: its rows not freed yet (not Growing)
  std::uint64_t heap_bytes_ = 0;           // the heap after the events so far
  std::uint64_t live_count_ = 0;
  std::uint32_t temporary_frees_ = 0;  // frees of temporary rows so far
  // publish(): the realloc links and replaced rows already in the sorted lists.
  std::size_t published_reallocs_ = 0;
  std::size_t published_replaced_ = 0;
};

}  // namespace memrec::analyzer
