// Holds back a dump's heap events per thread and hands them on in the one
// global order of FORMAT.md "Order" once a bound says no later frame can hold
// an earlier event: stream_dump (ordered_events.cpp) and a followed live dump
// (dump_follower.h) drive it. It never holds more than its memory budget;
// past that, events wait in an unlinked spill file.
//
// The window of held-back events is two vectors per thread (Pending), empty
// and unallocated while the thread holds none; a heap over the threads that
// hold events, by their earliest, finds those with events to release without
// looking at the others, so a release costs the same with four threads or
// thousands. Each release merges the ready prefixes at once (merge_streams,
// which compares only stream heads and so keeps a thread's events in their
// recorded order even at equal times) and hands the merge on in one call, so
// that the replay can fetch its live blocks ahead across threads. When only
// one thread has events to release, they go out as they are.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "load/event_spill.h"
#include "load/frame_collector.h"
#include "load/heap_event.h"
#include "load/loaded_dump.h"
#include "load/ordered_events.h"
#include "load/spill_buffer.h"
#include "load/stream_merger.h"

namespace memrec::analyzer {

// The fewest events a thread reads back from the spill file at once.
constexpr std::uint64_t kMinReadBack = 16;

class EventReleaser {
 public:
  // `held_in_memory`: LoadOptions'. Events read back from the file may take
  // memory up to twice that.
  EventReleaser(OrderedEventSink& sink, StreamedDump& out, std::uint64_t held_in_memory, std::string spill_dir)
      : sink_(sink), out_(out), budget_(held_in_memory), spill_(std::move(spill_dir)) {}

  void add(const LoadedDump& dump, FrameData& data) {
    for (auto& [tid, events] : data.events) {
      if (events.empty()) continue;
      const std::uint32_t t = thread_index(dump, tid);
      if (t >= pending_.size()) pending_.resize(t + 1);
      if (spill(t, events)) continue;
      const bool was_empty = pending_[t].empty();
      held_ += events.size();
      pending_[t].add(events);
      if (was_empty) requeue(t);
    }
    out_.max_pending = std::max(out_.max_pending, held_ + spilled_);
    out_.max_in_memory = std::max(out_.max_in_memory, held_);
  }

  // Hands on, in merged order, every held event earlier than `bound`. With
  // events in the spill file, in steps: up to the earliest event still
  // there, then that thread reads its next events back, and so on.
  void release_before(std::uint64_t bound) {
    while (!spill_heads_.empty() && spill_heads_.front().time_ns < bound) {
      std::pop_heap(spill_heads_.begin(), spill_heads_.end(), later);
      const Head h = spill_heads_.back();
      spill_heads_.pop_back();
      if (!pending_[h.thread].spilled()) continue;  // read back whole when the file failed
      release_in_memory(h.time_ns);
      read_back(h.thread);
    }
    release_in_memory(bound);
  }

 private:
  // Sends thread t's events to the spill file when the memory budget is
  // spent, or when it already has events there (its order is kept: what is
  // in memory comes first, then the file's segments in order). False: they
  // stay in memory (the budget is not spent, or the file failed).
  bool spill(std::uint32_t t, std::vector<HeapEvent>& events) {
    Pending& q = pending_[t];
    if (!q.spilled() && held_ + events.size() <= budget_) return false;
    std::uint64_t offset = 0;
    if (!spill_.append(events, offset)) {
      while (q.spilled()) read_back(t, /*all=*/true);  // the file failed: bring all back, in order
      return false;
    }
    const bool first = !q.spilled();
    q.segments.push_back(Segment{offset, events.size(), events.front().time_ns});
    spilled_ += events.size();
    out_.spilled += events.size();
    events = std::vector<HeapEvent>();
    if (first) {
      ++spilling_;
      push_spill_head(t);  // read back when release_before() reaches it, not before
    }
    return true;
  }

  // Reads thread t's next events back from the file (all of them if `all`),
  // behind those it holds in memory. Its spill head, if it had one, was
  // taken off the heap. A thread holds no more of its events read back than
  // its share, taken when it reads, of twice the budget less what memory holds.
  void read_back(std::uint32_t t, bool all = false) {
    Pending& q = pending_[t];
    Segment& s = q.segments[q.segment_head];
    // What is left of twice the budget, shared among the threads with
    // events in the file.
    const std::uint64_t room = 2 * budget_ - std::min(held_, 2 * budget_);
    const std::uint64_t share = std::max(kMinReadBack, room / std::max<std::uint64_t>(spilling_, 1));
    const std::uint64_t n = all ? s.count : std::min(s.count, share);
    // One event more, when the segment goes on: its time is where the next
    // step of release_before() stops.
    read_buffer_.clear();
    spill_.read(s.offset, n + (n < s.count ? 1 : 0), read_buffer_);
    spill_.discard(s.offset, n);
    if (n < s.count) {
      s.first_ns = read_buffer_.back().time_ns;
      read_buffer_.pop_back();
      s.offset += n;
      s.count -= n;
    } else if (++q.segment_head == q.segments.size()) {
      q.segments = std::vector<Segment>();
      q.segment_head = 0;
      --spilling_;
    }
    spilled_ -= n;
    held_ += n;
    const bool was_empty = q.empty();
    q.add(read_buffer_);
    read_buffer_ = std::vector<HeapEvent>();  // add() may have taken its room; start afresh
    if (was_empty) requeue(t);
    if (q.spilled() && !all) push_spill_head(t);
    out_.max_in_memory = std::max(out_.max_in_memory, held_);
  }

  void push_spill_head(std::uint32_t t) {
    const Pending& q = pending_[t];
    spill_heads_.push_back(Head{q.segments[q.segment_head].first_ns, t});
    std::push_heap(spill_heads_.begin(), spill_heads_.end(), later);
  }

  // Hands on, in merged order, every event held in memory earlier than
  // `bound`; none in the spill file is.
  void release_in_memory(std::uint64_t bound) {
    ids_.clear();
    while (!heads_.empty() && heads_.front().time_ns < bound) {
      std::pop_heap(heads_.begin(), heads_.end(), later);
      ids_.push_back(heads_.back().thread);
      heads_.pop_back();
    }
    if (ids_.empty()) return;
    if (ids_.size() == 1) {
      // One thread has events to release (always so in a one-thread dump):
      // its own order is the merged order, no merge needed.
      const std::uint32_t t = ids_.front();
      emit(t, pending_[t].count_before(bound));
      requeue(t);
      return;
    }
    // The merge breaks ties by the order of its streams: by thread index.
    std::sort(ids_.begin(), ids_.end());
    streams_.clear();
    ready_.clear();
    for (const std::uint32_t t : ids_) {
      ready_.push_back(pending_[t].count_before(bound));
      streams_.push_back(pending_[t].contiguous_front(ready_.back()));
    }
    // In pieces of at most kMergeEvents: a release can hold many threads'
    // events (with thousands of threads, a good part of the dump), and
    // merged whole its copy was as large again.
    taken_.resize(ids_.size());
    for (;;) {
      merge_streams(streams_, ids_, kMergeEvents, merged_, merged_threads_, taken_);
      if (merged_.empty()) break;
      for (std::size_t i = 0; i < streams_.size(); ++i) streams_[i] = streams_[i].subspan(taken_[i]);
      sink_.on_merged(merged_, merged_threads_);
      out_.events += merged_.size();
    }
    for (std::size_t i = 0; i < ids_.size(); ++i) {
      take(ids_[i], ready_[i]);
      requeue(ids_[i]);
    }
  }

  // A run of a thread's events in the spill file, and the time of its first.
  struct Segment {
    std::uint64_t offset;  // in events
    std::uint64_t count;
    std::uint64_t first_ns;
  };

  // A thread's held events, in order: what is left of `older` from `head`
  // on, then `newer`. In a one-thread dump a release keeps back only the few
  // events at the next frame's earliest time or later; appending the next
  // frame's events behind them copied every frame (5 % of churn-1t's report,
  // on the replay thread). Those few now move to a vector of their own and
  // the frame comes in by swap. A merge of threads needs its events in one
  // span, so there the two are joined, in the frame's own list where it has
  // the room: a new list for each join, or two kept whole, took churn-2t's
  // report 9 MB more.
  struct Pending {
    std::vector<HeapEvent> older;
    std::vector<HeapEvent> newer;
    std::size_t head = 0;  // into older
    // Behind newer: the events in the spill file, from segment_head on.
    std::vector<Segment> segments;
    std::size_t segment_head = 0;

    bool spilled() const { return segment_head < segments.size(); }

    std::size_t older_left() const { return older.size() - head; }
    // Newer holds events only while older does too.
    bool empty() const { return older_left() == 0; }
    std::uint64_t front_ns() const { return older[head].time_ns; }
    void add(std::vector<HeapEvent>& events) {
      // A frame's list may be empty and yet reserved (a frame of one thread
      // that recorded no event): taking it would hold its room for nothing.
      if (events.empty()) return;
      if (older_left() == 0) {  // nothing held (newer is empty then too)
        older.swap(events);
        head = 0;
        return;
      }
      if (newer.empty() && older_left() <= events.size() / 8) {
        std::vector<HeapEvent>(older.begin() + static_cast<std::ptrdiff_t>(head), older.end()).swap(older);
        head = 0;
        newer.swap(events);
        return;
      }
      join();
      older.insert(older.end(), events.begin(), events.end());
    }
    // Older's rest and newer in one vector: the rest put in front of newer
    // when newer has the room (a frame's list is reserved for its largest
    // count), so that no new list is made and touched; else newer behind it.
    void join() {
      if (newer.capacity() - newer.size() >= older_left()) {
        newer.insert(newer.begin(), older.begin() + static_cast<std::ptrdiff_t>(head), older.end());
        older.swap(newer);
      } else {
        older.erase(older.begin(), older.begin() + static_cast<std::ptrdiff_t>(head));
        older.insert(older.end(), newer.begin(), newer.end());
      }
      head = 0;
      newer = std::vector<HeapEvent>();
    }
    // How many held events, from the front, are earlier than `bound`.
    std::size_t count_before(std::uint64_t bound) const {
      std::size_t n = 0;
      while (head + n < older.size() && older[head + n].time_ns < bound) ++n;
      if (head + n < older.size()) return n;
      std::size_t m = 0;
      while (m < newer.size() && newer[m].time_ns < bound) ++m;
      return n + m;
    }
    // The first `n` held events as one span (a merge of threads needs it).
    std::span<const HeapEvent> contiguous_front(std::size_t n) {
      if (n > older_left()) join();
      return std::span<const HeapEvent>(older).subspan(head, n);
    }
    // Drops the first `n` held events. A thread keeps no more memory than
    // twice the events it holds: none when it holds none, and the rest of a
    // list mostly spent is moved to one of its own. Otherwise every thread
    // waiting for its turn kept a frame's list whole, and with thousands of
    // threads alive at once that was most of the dump. Each move copies
    // fewer events than were spent since the last, so an event is copied
    // at most once more on the whole.
    void take(std::size_t n) {
      const std::size_t from_older = std::min(n, older_left());
      head += from_older;
      if (older_left() == 0 && !newer.empty()) {
        older.swap(newer);
        newer = std::vector<HeapEvent>();
        head = n - from_older;
      }
      if (older_left() == 0) {
        older = std::vector<HeapEvent>();  // not `= {}`: that clears and keeps the memory
        head = 0;
      } else if (head > older_left()) {
        std::vector<HeapEvent>(older.begin() + static_cast<std::ptrdiff_t>(head), older.end()).swap(older);
        head = 0;
      }
    }
  };

  // Hands on thread t's first `n` held events: older's, then newer's.
  void emit(std::size_t t, std::size_t n) {
    Pending& q = pending_[t];
    const std::size_t from_older = std::min(n, q.older_left());
    if (from_older != 0) {
      sink_.on_events(std::span<const HeapEvent>(q.older).subspan(q.head, from_older), static_cast<std::uint32_t>(t));
    }
    if (n > from_older) {
      sink_.on_events(std::span<const HeapEvent>(q.newer).first(n - from_older), static_cast<std::uint32_t>(t));
    }
    out_.events += n;
    take(t, n);
  }

  void take(std::size_t t, std::size_t n) {
    pending_[t].take(n);
    held_ -= n;
  }

  // A thread that holds events goes (back) into the heap by its earliest.
  void requeue(std::uint32_t t) {
    if (pending_[t].empty()) return;
    heads_.push_back(Head{pending_[t].front_ns(), t});
    std::push_heap(heads_.begin(), heads_.end(), later);
  }

  // LoadedDump::threads only grows, one entry per tid in first-appearance
  // order: index the entries added since the last miss, then look again.
  std::uint32_t thread_index(const LoadedDump& dump, std::uint64_t tid) {
    auto it = index_.find(tid);
    if (it != index_.end()) return it->second;
    for (; indexed_ < dump.threads.size(); ++indexed_) {
      index_.try_emplace(dump.threads[indexed_].tid, static_cast<std::uint32_t>(indexed_));
    }
    it = index_.find(tid);
    return it != index_.end() ? it->second : static_cast<std::uint32_t>(dump.threads.size());
  }

  // A thread holding events and the time of its earliest; `later` makes
  // std::push_heap's max-heap a min-heap by time.
  struct Head {
    std::uint64_t time_ns;
    std::uint32_t thread;
  };
  static bool later(const Head& a, const Head& b) { return a.time_ns > b.time_ns; }

  OrderedEventSink& sink_;
  StreamedDump& out_;
  const std::uint64_t budget_;
  std::vector<Pending> pending_;  // by thread index
  std::vector<Head> heads_;       // one per thread in pending_ that holds events in memory
  // One per thread with events in the spill file, by the time of the first.
  std::vector<Head> spill_heads_;
  EventSpill spill_;
  std::vector<HeapEvent> read_buffer_;
  std::uint64_t spilling_ = 0;  // threads with events in the file
  std::uint64_t spilled_ = 0;   // events there
  // A release: the threads with events ready (ids_), how many each (ready_),
  // their ready events, and their merge.
  std::vector<std::uint32_t> ids_;
  std::vector<std::size_t> ready_;
  std::vector<std::span<const HeapEvent>> streams_;
  std::vector<std::size_t> taken_;  // by position in ids_: events in the piece merged
  std::vector<HeapEvent> merged_;
  std::vector<std::uint32_t> merged_threads_;
  // 2 MiB of events, and their threads.
  static constexpr std::size_t kMergeEvents = std::size_t{1} << 16;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  std::size_t indexed_ = 0;  // dump.threads entries in index_
  std::uint64_t held_ = 0;   // events in memory
};

}  // namespace memrec::analyzer
