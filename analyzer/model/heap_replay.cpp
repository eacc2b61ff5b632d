// One small function per operation; the merge decides the order.
#include "model/heap_replay.h"

#include "load/stream_merger.h"

namespace memrec::analyzer {
namespace {

void apply_alloc(HeapReplay& h, const HeapEvent& e) {
  if (const auto old = h.live.insert(e.addr, LiveBlock{e.size, e.stack, 0, e.time_ns})) {
    ++h.replaced_blocks;
    h.live_bytes -= old->size;
  }
  h.live_bytes += e.size;
  if (h.live_bytes > h.peak_bytes) {
    h.peak_bytes = h.live_bytes;
    h.peak_time_ns = e.time_ns;
  }
}

void apply_free(HeapReplay& h, const HeapEvent& e) {
  if (const auto old = h.live.erase(e.addr)) {
    h.live_bytes -= old->size;
  } else {
    ++h.unmatched_frees;
  }
}

void apply_mmap(HeapReplay& h, const HeapEvent& e) { h.mmap.map(e.addr, e.size, e.stack); }

// Every munmap is recorded, file mappings' too: most overlap nothing we know.
void apply_munmap(HeapReplay& h, const HeapEvent& e) { h.mmap.unmap(e.addr, e.size); }

}  // namespace

void replay_event(HeapReplay& h, const HeapEvent& e) {
  switch (e.op) {
    case HeapOp::kAlloc:
      apply_alloc(h, e);
      break;
    case HeapOp::kFree:
      apply_free(h, e);
      break;
    case HeapOp::kMmap:
      apply_mmap(h, e);
      break;
    case HeapOp::kMunmap:
      apply_munmap(h, e);
      break;
  }
}

HeapReplay replay_heap(std::span<const std::vector<HeapEvent>> streams) {
  HeapReplay h;
  StreamMerger merger(streams);
  while (const HeapEvent* e = merger.next()) replay_event(h, *e);
  return h;
}

}  // namespace memrec::analyzer
