// A streaming k-way merge of per-thread event sequences into one order
// (FORMAT.md, "Order"): by time; at equal times releases before
// acquisitions; each thread's own order kept, since only heads are compared.
#pragma once

#include <cstddef>
#include <queue>
#include <span>
#include <tuple>
#include <vector>

#include "model/heap_event.h"

namespace memrec::analyzer {

class StreamMerger {
 public:
  explicit StreamMerger(std::span<const std::vector<HeapEvent>> streams) : streams_(streams) {
    for (std::size_t i = 0; i < streams_.size(); ++i) push(i, 0);
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

  void push(std::size_t stream, std::size_t pos) {
    if (pos >= streams_[stream].size()) return;
    const HeapEvent& e = streams_[stream][pos];
    heads_.push(Head{e.time_ns, order_rank(e.op), stream, pos});
  }

  std::span<const std::vector<HeapEvent>> streams_;
  std::priority_queue<Head> heads_;
};

}  // namespace memrec::analyzer
