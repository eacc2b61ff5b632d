// Two streams (the common case with several threads: a release seldom finds
// more than two with events ready) merge with one compare per event; more go
// through StreamMerger's heap of their heads. Every path stops at the limit.
#include "load/stream_merger.h"

#include <algorithm>
#include <cstdint>
#include <utility>

namespace memrec::analyzer {
namespace {

// Whether `a` goes before `b` of a stream listed later (ties keep `a` first).
inline bool goes_after(const HeapEvent& b, const HeapEvent& a) {
  return b.time_ns < a.time_ns || (b.time_ns == a.time_ns && order_rank(b.op) < order_rank(a.op));
}

// Writes at most `limit` events; returns how many came from `a`, and from `b`.
std::pair<std::size_t, std::size_t> merge_two(std::span<const HeapEvent> a, std::uint32_t a_id,
                                              std::span<const HeapEvent> b, std::uint32_t b_id, std::size_t limit,
                                              HeapEvent* out, std::uint32_t* out_ids) {
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size() && i + j < limit) {
    if (goes_after(b[j], a[i])) {
      *out++ = b[j++];
      *out_ids++ = b_id;
    } else {
      *out++ = a[i++];
      *out_ids++ = a_id;
    }
  }
  for (; i < a.size() && i + j < limit; ++i) {
    *out++ = a[i];
    *out_ids++ = a_id;
  }
  for (; j < b.size() && i + j < limit; ++j) {
    *out++ = b[j];
    *out_ids++ = b_id;
  }
  return {i, j};
}

}  // namespace

void merge_streams(std::span<const std::span<const HeapEvent>> streams, std::span<const std::uint32_t> ids,
                   std::vector<HeapEvent>& events, std::vector<std::uint32_t>& threads) {
  std::vector<std::size_t> taken(streams.size());
  merge_streams(streams, ids, SIZE_MAX, events, threads, taken);
}

void merge_streams(std::span<const std::span<const HeapEvent>> streams, std::span<const std::uint32_t> ids,
                   std::size_t limit, std::vector<HeapEvent>& events, std::vector<std::uint32_t>& threads,
                   std::span<std::size_t> taken) {
  std::size_t total = 0;
  std::size_t nonempty = 0;
  std::size_t first = 0;
  std::size_t second = 0;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    taken[i] = 0;
    if (streams[i].empty()) continue;
    total += streams[i].size();
    if (nonempty == 0) first = i;
    if (nonempty == 1) second = i;
    ++nonempty;
  }
  total = std::min(total, limit);
  events.resize(total);
  threads.resize(total);
  if (nonempty == 0) return;
  if (nonempty == 1) {
    std::copy_n(streams[first].begin(), total, events.begin());
    std::fill(threads.begin(), threads.end(), ids[first]);
    taken[first] = total;
    return;
  }
  if (nonempty == 2) {
    const auto [from_first, from_second] =
        merge_two(streams[first], ids[first], streams[second], ids[second], total, events.data(), threads.data());
    taken[first] = from_first;
    taken[second] = from_second;
    return;
  }
  StreamMerger merger(streams);
  std::size_t stream = 0;
  for (std::size_t n = 0; n < total; ++n) {
    const HeapEvent* e = merger.next(&stream);
    events[n] = *e;
    threads[n] = ids[stream];
    ++taken[stream];
  }
}

}  // namespace memrec::analyzer
