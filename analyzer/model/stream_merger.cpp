// Two streams (the common case with several threads: a release seldom finds
// more than two with events ready) merge with one compare per event; more go
// through StreamMerger's heap of their heads.
#include "model/stream_merger.h"

#include <algorithm>

namespace memrec::analyzer {
namespace {

// Whether `a` goes before `b` of a stream listed later (ties keep `a` first).
inline bool goes_after(const HeapEvent& b, const HeapEvent& a) {
  return b.time_ns < a.time_ns || (b.time_ns == a.time_ns && order_rank(b.op) < order_rank(a.op));
}

void merge_two(std::span<const HeapEvent> a, std::uint32_t a_id, std::span<const HeapEvent> b, std::uint32_t b_id,
               HeapEvent* out, std::uint32_t* out_ids) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (goes_after(b[j], a[i])) {
      *out++ = b[j++];
      *out_ids++ = b_id;
    } else {
      *out++ = a[i++];
      *out_ids++ = a_id;
    }
  }
  for (; i < a.size(); ++i) {
    *out++ = a[i];
    *out_ids++ = a_id;
  }
  for (; j < b.size(); ++j) {
    *out++ = b[j];
    *out_ids++ = b_id;
  }
}

}  // namespace

void merge_streams(std::span<const std::span<const HeapEvent>> streams, std::span<const std::uint32_t> ids,
                   std::vector<HeapEvent>& events, std::vector<std::uint32_t>& threads) {
  std::size_t total = 0;
  std::size_t nonempty = 0;
  std::size_t first = 0;
  std::size_t second = 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    if (streams[i].empty()) continue;
    total += streams[i].size();
    if (nonempty == 0) first = i;
    if (nonempty == 1) second = i;
    ++nonempty;
  }
  events.resize(total);
  threads.resize(total);
  if (nonempty == 0) return;
  if (nonempty == 1) {
    std::copy(streams[first].begin(), streams[first].end(), events.begin());
    std::fill(threads.begin(), threads.end(), ids[first]);
    return;
  }
  if (nonempty == 2) {
    merge_two(streams[first], ids[first], streams[second], ids[second], events.data(), threads.data());
    return;
  }
  StreamMerger merger(streams);
  std::size_t stream = 0;
  std::size_t n = 0;
  while (const HeapEvent* e = merger.next(&stream)) {
    events[n] = *e;
    threads[n] = ids[stream];
    ++n;
  }
}

}  // namespace memrec::analyzer
