// One handler per operation. Temporary allocations follow heaptrack's idea
// (an allocation freed before anything else is allocated) but per thread, so
// another thread's activity in between does not hide one.
#include "model/stack_replay.h"

#include <algorithm>

#include "model/mapping_record.h"

namespace memrec::analyzer {
namespace {

// Stack ids are dense from 1; a larger id than this is hostile input, not a
// reason to grow every column to gigabytes.
constexpr std::uint32_t kMaxStackColumns = 1u << 26;

}  // namespace

void StackColumns::resize(std::size_t n) {
  for (auto* c : {&allocations, &allocated_bytes, &temporary, &leaked_bytes, &leaked_count, &peak_bytes}) {
    c->resize(n, 0);
  }
}

// The replay is the one serial stage of a load: its per-event helpers are
// inlined (their calls were a fifth of its instructions), the rare cases
// left in calls of their own.
[[gnu::always_inline]] inline std::uint32_t StackReplay::column_of(StackId stack) {
  const std::uint32_t s = stack.value;
  return s < columns_.size() ? s : grow_columns(s);
}

std::uint32_t StackReplay::grow_columns(std::uint32_t s) {
  if (s >= kMaxStackColumns) {
    ++totals_.bad_stack_ids;
    s = 0;
  }
  if (s >= columns_.size()) {
    // At most kMaxStackColumns, so that column_of's test alone keeps larger ids out.
    const std::size_t n = std::min<std::size_t>(std::max<std::size_t>(s + 1, columns_.size() * 2), kMaxStackColumns);
    columns_.resize(n);
    live_bytes_.resize(n, 0);
    stamp_.resize(n, 0);
  }
  return s;
}

[[gnu::always_inline]] inline void StackReplay::touch(std::uint32_t s) {
  if (stamp_[s] != epoch_) {
    columns_.peak_bytes[s] = live_bytes_[s];
    stamp_[s] = epoch_;
  }
}

// The heap already live when the window opens may be its peak.
void StackReplay::enter_window() {
  in_window_ = true;
  if (live_total_ > 0) {
    ++epoch_;
    totals_.peak_bytes = live_total_;
    totals_.peak_time_ns = window_.from_ns;
  }
}

void StackReplay::on_event(const HeapEvent& e, std::uint32_t thread) {
  if (timeline_ == nullptr) return step(e, thread);
  run<true>({&e, 1}, [thread](std::size_t) { return thread; }, {});
}

void StackReplay::on_events(std::span<const HeapEvent> events, std::uint32_t thread) { on_events(events, thread, {}); }

void StackReplay::on_events(std::span<const HeapEvent> events, std::uint32_t thread,
                            std::span<std::uint32_t> released) {
  const auto thread_of = [thread](std::size_t) { return thread; };
  timeline_ != nullptr ? run<true>(events, thread_of, released) : run<false>(events, thread_of, released);
}

void StackReplay::on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads) {
  on_merged(events, threads, {});
}

void StackReplay::on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads,
                            std::span<std::uint32_t> released) {
  const auto thread_of = [threads](std::size_t i) { return threads[i]; };
  timeline_ != nullptr ? run<true>(events, thread_of, released) : run<false>(events, thread_of, released);
}

// Inlined into run(): as a call, its prologue and epilogue alone were an
// eighth of the replay's instructions.
[[gnu::always_inline]] inline void StackReplay::step(const HeapEvent& e, std::uint32_t thread) {
  released_ = kNoRow;
  if (past_window_) return;
  if (e.time_ns > window_.to_ns) {
    past_window_ = true;
    return;
  }
  const bool counted = e.time_ns >= window_.from_ns;
  if (counted && !in_window_) enter_window();
  if (thread >= last_alloc_.size()) last_alloc_.resize(thread + 1, kNoBlock);
  switch (e.op) {
    case HeapOp::kAlloc:
      on_alloc(e, thread, counted);
      break;
    case HeapOp::kFree:
      on_free(e, thread, counted);
      break;
    case HeapOp::kMmap:
    case HeapOp::kMunmap:
      // Anonymous memory is not heap: no figure here counts it.
      if (mappings_ != nullptr) mappings_->add(e);
      break;
  }
}

// The live block's slot is fetched a few events ahead: churn's replay waits
// on it otherwise (10 ms of 0.32 s).
// With a timeline (kTimed), the events of each of its buckets are summed
// here, in locals the compiler keeps in registers, and handed over when the
// bucket or the span ends; without, none of it is compiled in.
template <bool kTimed, typename ThreadOf>
void StackReplay::run(std::span<const HeapEvent> events, ThreadOf thread_of, std::span<std::uint32_t> released) {
  constexpr std::size_t kAhead = 8;
  HeapTimeline::Run bucket;
  bool pending = false;
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i + kAhead < events.size()) live_.prefetch(events[i + kAhead].addr);
    const HeapEvent& e = events[i];
    const bool heap_event = e.op == HeapOp::kAlloc || e.op == HeapOp::kFree;
    if (kTimed && heap_event && e.time_ns >= timeline_until_) {
      if (pending) timeline_->add(bucket);
      bucket = {};
      pending = false;
      timeline_until_ = timeline_->bucket_end(e.time_ns);
    }
    step(e, thread_of(i));
    if (!released.empty()) released[i] = released_;
    if (kTimed && heap_event) {
      // Every allocation and free, also those outside the window: massif
      // draws the heap from the dump's start. A free that released a row
      // matched a block; one that did not leaves the heap as it was.
      const bool alloc = e.op == HeapOp::kAlloc;
      const bool changed = alloc || released_ != kNoRow;
      bucket.last_ns = e.time_ns;
      bucket.heap_bytes = live_total_;
      bucket.live_count = live_blocks_;
      const std::uint64_t highest = bucket.changed ? std::max(bucket.heap_max_bytes, live_total_) : live_total_;
      bucket.heap_max_bytes = changed ? highest : bucket.heap_max_bytes;
      bucket.changed = bucket.changed || changed;
      bucket.alloc_count += alloc ? 1 : 0;
      bucket.free_count += changed && !alloc ? 1 : 0;
      // Every temporary one, also outside the window or the selection: at its
      // free, the only time it is known to be one.
      bucket.temporary_count += changed && !alloc && freed_temporary_ ? 1 : 0;
      pending = true;
    }
  }
  if (kTimed && pending) timeline_->add(bucket);
}

[[gnu::always_inline]] inline bool StackReplay::next_selected() {
  const std::uint64_t i = allocations_seen_++;  // the row (on_alloc takes it first)
  return selected_ == nullptr || (i < selected_->size() && (*selected_)[i]);
}

[[gnu::always_inline]] inline void StackReplay::drop(const LiveBlock& block) {
  const std::uint32_t s = block.stack.value;
  touch(s);
  live_bytes_[s] -= block.size;
  live_total_ -= block.size;
  --live_blocks_;
}

[[gnu::always_inline]] inline void StackReplay::on_alloc(const HeapEvent& e, std::uint32_t thread, bool counted) {
  const auto row = static_cast<std::uint32_t>(allocations_seen_);
  const bool selected = next_selected();
  const std::uint32_t s = selected ? column_of(e.stack) : kUnselected;
  if (const auto old = live_.insert(e.addr, LiveBlock{e.size, StackId{s}, row, e.time_ns})) {
    released_ = old->row;
    if (old->stack.value != kUnselected) {
      ++totals_.replaced_blocks;
      drop(*old);
      // Its free was not recorded: its lifetime ends here, as the allocation table has it.
      if (counted && old->time_ns >= window_.from_ns)
        totals_.histograms.lifetimes.add(e.time_ns - old->time_ns, old->size);
    }
  }
  last_alloc_[thread] = e.addr;
  if (!selected) return;
  touch(s);
  live_bytes_[s] += e.size;
  live_total_ += e.size;
  ++live_blocks_;
  if (!counted) return;
  ++columns_.allocations[s];
  columns_.allocated_bytes[s] += e.size;
  ++totals_.allocations;
  totals_.allocated_bytes += e.size;
  totals_.histograms.sizes.add(e.size, e.size);
  if (live_total_ > totals_.peak_bytes) {
    ++epoch_;
    totals_.peak_bytes = live_total_;
    totals_.peak_time_ns = e.time_ns;
  }
}

[[gnu::always_inline]] inline void StackReplay::on_free(const HeapEvent& e, std::uint32_t thread, bool counted) {
  const auto block = live_.erase(e.addr);
  if (!block) {
    // A free of no recorded block frees no selected one either.
    if (counted && selected_ == nullptr) ++totals_.unmatched_frees;
    return;
  }
  released_ = block->row;
  const bool temporary = last_alloc_[thread] == e.addr;
  if (temporary) last_alloc_[thread] = kNoBlock;
  freed_temporary_ = temporary;
  if (block->stack.value == kUnselected) return;
  drop(*block);
  if (!counted) return;
  ++totals_.frees;
  if (block->time_ns >= window_.from_ns) totals_.histograms.lifetimes.add(e.time_ns - block->time_ns, block->size);
  if (temporary && block->time_ns >= window_.from_ns) {
    ++columns_.temporary[block->stack.value];
    ++totals_.temporary;
  }
}

void StackReplay::finish() {
  for (std::uint32_t s = 0; s < columns_.size(); ++s) touch(s);
  if (epoch_ == 0) std::fill(columns_.peak_bytes.begin(), columns_.peak_bytes.end(), 0);
  live_.for_each([&](std::uint64_t, const LiveBlock& block) {
    if (block.time_ns < window_.from_ns || block.stack.value == kUnselected) return;
    columns_.leaked_bytes[block.stack.value] += block.size;
    ++columns_.leaked_count[block.stack.value];
    totals_.leaked_bytes += block.size;
    ++totals_.leaked_count;
    ++totals_.histograms.unfreed;
    totals_.histograms.unfreed_bytes += block.size;
  });
  live_ = AddressMap();
  // New empty vectors, not `= {}`: that assigns an empty list and keeps the room.
  live_bytes_ = std::vector<std::uint64_t>();
  stamp_ = std::vector<std::uint32_t>();
}

}  // namespace memrec::analyzer
