// A k-way merge of per-thread event sequences into one order (FORMAT.md,
// "Order"): by time; at equal times releases before acquisitions, then the
// stream listed first; each thread's own order kept, since only heads are
// compared. StreamMerger hands events on one at a time; merge_streams writes
// a whole merge out at once, for the load's releases (load/ordered_events.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

#include "load/heap_event.h"

namespace memrec::analyzer {

class StreamMerger {
 public:
  explicit StreamMerger(std::span<const std::vector<HeapEvent>> streams) : streams_(streams.begin(), streams.end()) {
    start();
  }
  explicit StreamMerger(std::span<const std::span<const HeapEvent>> streams)
      : streams_(streams.begin(), streams.end()) {
    start();
  }

  // The next event in merged order, or nullptr at the end. `stream` (if
  // given) receives the index of the thread stream it came from.
  const HeapEvent* next(std::size_t* stream = nullptr) {
    if (heads_.empty()) return nullptr;
    const Head h = heads_.top();
    heads_.pop();
    push(h.stream, h.pos + 1);
    if (stream != nullptr) *stream = h.stream;
    return &streams_[h.stream][h.pos];
  }

 private:
  struct Head {
    std::uint64_t time_ns;
    int rank;
    std::size_t stream;
    std::size_t pos;
    // std::priority_queue is a max-heap: "greater" sorts the earliest first;
    // the stream index makes ties deterministic.
    bool operator<(const Head& o) const {
      return std::tie(time_ns, rank, stream) > std::tie(o.time_ns, o.rank, o.stream);
    }
  };

  void start() {
    for (std::size_t i = 0; i < streams_.size(); ++i) push(i, 0);
  }

  void push(std::size_t stream, std::size_t pos) {
    if (pos >= streams_[stream].size()) return;
    const HeapEvent& e = streams_[stream][pos];
    heads_.push(Head{e.time_ns, order_rank(e.op), stream, pos});
  }

  std::vector<std::span<const HeapEvent>> streams_;
  std::priority_queue<Head> heads_;
};

// Merges `streams` into `events`, and into `threads` the id of the stream
// each event came from (`ids[i]` is that of `streams[i]`): the order of
// StreamMerger, at a few compares an event instead of a heap's push and pop.
// Both outputs are replaced.
void merge_streams(std::span<const std::span<const HeapEvent>> streams, std::span<const std::uint32_t> ids,
                   std::vector<HeapEvent>& events, std::vector<std::uint32_t>& threads);

// The same, but only the first `limit` events of the merge; `taken[i]`
// (taken.size() == streams.size()) receives how many came from streams[i],
// so that the rest can be merged after them by passing each stream's rest.
void merge_streams(std::span<const std::span<const HeapEvent>> streams, std::span<const std::uint32_t> ids,
                   std::size_t limit, std::vector<HeapEvent>& events, std::vector<std::uint32_t>& threads,
                   std::span<std::size_t> taken);

}  // namespace memrec::analyzer
