// Replays a dump's heap events in merged order (it is the OrderedEventSink
// of load/ordered_events.h) and keeps, per allocation stack, the figures the
// report ranks call sites by. Nothing is kept per allocation but the live
// blocks: memory grows with the live heap and the number of stacks, not with
// the length of the recording.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "load/heap_event.h"
#include "load/ordered_events.h"
#include "model/address_map.h"
#include "model/heap_timeline.h"
#include "model/histograms.h"

namespace memrec::analyzer {

class MappingRecord;

// The events counted: [from_ns, to_ns] in CLOCK_MONOTONIC ns, both ends included.
struct TimeWindow {
  std::uint64_t from_ns = 0;
  std::uint64_t to_ns = std::numeric_limits<std::uint64_t>::max();
};

// Figures per stack id, a column each, indexed by StackId::value (stack 0:
// no stack). Heap (malloc family) events only; anonymous mmaps are not here.
struct StackColumns {
  std::vector<std::uint64_t> allocations;      // allocation calls in the window (a realloc counts)
  std::vector<std::uint64_t> allocated_bytes;  // their requested bytes
  std::vector<std::uint64_t> temporary;        // of those, freed before the thread's next allocation
  std::vector<std::uint64_t> leaked_bytes;     // allocated in the window, live at its end
  std::vector<std::uint64_t> leaked_count;
  std::vector<std::uint64_t> peak_bytes;  // live at the window's peak (blocks from before it too)

  std::size_t size() const { return allocations.size(); }
  void resize(std::size_t n);
};

struct HeapTotals {
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;  // frees that matched a live block
  std::uint64_t allocated_bytes = 0;
  std::uint64_t temporary = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t peak_time_ns = 0;  // when the peak was first reached; 0 if the window saw no heap
  std::uint64_t leaked_bytes = 0;
  std::uint64_t leaked_count = 0;
  std::uint64_t unmatched_frees = 0;  // of blocks allocated before recording began or while paused
  std::uint64_t replaced_blocks = 0;  // an allocation over a live block: its free was not recorded
  std::uint64_t bad_stack_ids = 0;    // ids far beyond the stacks defined: counted under stack 0
  Histograms histograms;              // sizes and lifetimes of the window's allocations
};

class StackReplay final : public OrderedEventSink {
 public:
  // With `selected` (one flag per allocation, in merged order: the rows of
  // model/allocation_table.h), only the selected allocations count, as if the
  // program had made no other: the rest and their frees change no figure, no
  // peak and no total. They still end their thread's run for "temporary",
  // which is a property of each allocation that a selection must not change.
  // `selected` must outlive the replay.
  explicit StackReplay(TimeWindow window, const std::vector<bool>* selected = nullptr)
      : window_(window), selected_(selected) {}

  void on_event(const HeapEvent& event, std::uint32_t thread) override;
  void on_events(std::span<const HeapEvent> events, std::uint32_t thread) override;
  // Also gives, for each event, the row (allocation index in merged order,
  // as the allocation table numbers them) of the block it released: a
  // free's, or the live block an allocation replaced; kNoRow if none. A
  // model that takes these as tags needs no address map of its own (memrec
  // view's table); they are exact only while the window has no end, since
  // past it the replay takes no event. `released` may be empty.
  void on_events(std::span<const HeapEvent> events, std::uint32_t thread, std::span<std::uint32_t> released);
  // Events of several threads in merged order (OrderedEventSink::on_merged),
  // with the live blocks fetched ahead across them; `released` as above.
  void on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads) override;
  void on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads,
                 std::span<std::uint32_t> released);
  // The same for the last event taken.
  std::uint32_t released_row() const { return released_; }
  // With a timeline, gives it the heap after every allocation and free taken,
  // each allocation, and each free that matched a block, telling the frees of
  // temporary allocations (massif's snapshots; memrec view's whole run while
  // its table is built). It must outlive the replay.
  void set_timeline(HeapTimeline* timeline) {
    timeline_ = timeline;
    timeline_until_ = 0;
  }
  // With a record, hands it every mmap and munmap event taken (memrec
  // view's Maps). It must outlive the replay.
  void set_mappings(MappingRecord* mappings) { mappings_ = mappings; }
  // Once every event is in: counts the leaks and fixes the peak column, then
  // frees the live blocks (live_block() finds none after it): the call sites
  // built next are the report's peak of memory.
  void finish();

  const StackColumns& columns() const { return columns_; }
  const HeapTotals& totals() const { return totals_; }
  // The live block at `addr`, or nullptr: lets a sink that runs before this
  // replay see which block a free releases (export/heaptrack.cpp).
  const LiveBlock* live_block(std::uint64_t addr) const { return live_.find(addr); }
  // The heap now (every block, also those from before the window): the timeline's input.
  std::uint64_t live_bytes() const { return live_total_; }
  std::uint64_t live_count() const { return live_blocks_; }

 private:
  // When a stack's live bytes change, first save them as its value at the
  // latest peak if nothing has since the peak: that makes the snapshot of
  // every stack at the peak cost O(1) per event instead of O(stacks) per peak.
  void touch(std::uint32_t stack);
  void enter_window();
  void step(const HeapEvent& e, std::uint32_t thread);
  // Steps through `events`, thread_of(i) being events[i]'s thread; fills
  // `released` unless empty; kTimed: timeline_ is set.
  template <bool kTimed, typename ThreadOf>
  void run(std::span<const HeapEvent> events, ThreadOf thread_of, std::span<std::uint32_t> released);
  std::uint32_t column_of(StackId stack);
  std::uint32_t grow_columns(std::uint32_t stack);  // column_of's rare case: a new or hostile id
  void on_alloc(const HeapEvent& e, std::uint32_t thread, bool counted);
  void on_free(const HeapEvent& e, std::uint32_t thread, bool counted);
  bool next_selected();
  void drop(const LiveBlock& block);  // a live block leaves the heap

  static constexpr std::uint64_t kNoBlock = ~0ull;
  // The stack of a live block that is not selected (column_of never gives it).
  static constexpr std::uint32_t kUnselected = ~0u;

  TimeWindow window_;
  bool in_window_ = false;
  bool past_window_ = false;
  StackColumns columns_;
  std::vector<std::uint64_t> live_bytes_;  // by stack, now
  std::vector<std::uint32_t> stamp_;       // by stack: the peak epoch peak_bytes was saved at
  std::uint32_t epoch_ = 0;                // one more at each new peak
  std::uint64_t live_total_ = 0;
  std::uint64_t live_blocks_ = 0;          // selected ones
  const std::vector<bool>* selected_;      // null: every allocation
  std::uint64_t allocations_seen_ = 0;     // the next allocation's index in `selected_`
  std::uint32_t released_ = kNoRow;        // released_row()
  bool freed_temporary_ = false;           // set with released_ by a free: the block was temporary
  std::vector<std::uint64_t> last_alloc_;  // by thread: its latest allocation, while live
  AddressMap live_;
  HeapTotals totals_;
  HeapTimeline* timeline_ = nullptr;
  MappingRecord* mappings_ = nullptr;
  std::uint64_t timeline_until_ = 0;  // the end of the timeline's bucket that run() sums events for
};

}  // namespace memrec::analyzer
