// One small handler per record kind. Runs on the loader's worker threads, one
// collector per frame; it shares nothing.
#include "load/frame_collector.h"

#include <algorithm>

namespace memrec::analyzer {

// Inlined: two calls per heap event were a tenth of the collector's work.
[[gnu::always_inline]] inline void FrameCollector::saw_time(std::uint64_t t) {
  if (!out_.last_time_ns || t > *out_.last_time_ns) out_.last_time_ns = t;
}

[[gnu::always_inline]] inline void FrameCollector::saw_event(std::uint64_t t) {
  out_.earliest_event_ns = std::min(out_.earliest_event_ns, t);
  saw_time(t);
}

void FrameCollector::on_thread(const reader::ThreadRecord& r) {
  const auto [it, inserted] = stream_of_tid_.try_emplace(r.tid, out_.events.size());
  if (inserted) {
    out_.events.emplace_back(r.tid, std::vector<HeapEvent>{});
    // Reserved whole, a list never grows by copying. Growing, the second
    // thread's list in churn-2t's frames touched up to twice its memory:
    // that dump's report peaked at 99-115 MB of RSS, 78-86 MB reserved.
    // Reserved capacity is address space until it is used, but under strict
    // overcommit it counts, so only a frame's first few threads get it.
    if (out_.events.size() <= kReservedThreads) out_.events.back().second.reserve(max_events_);
    out_.meta.emplace_back(r);
  }
  current_ = it->second;
}

// Not inlined, and the event built in place: the decoder has just stored the
// record's fields one by one, and a 16-byte copy of two of them (into a
// temporary HeapEvent, then into the vector) could not be served from those
// stores and waited for them to reach the cache: a fifth of the load's CPU
// time on bench churn's dump.
[[gnu::noinline]] void FrameCollector::push(std::uint64_t time_ns, std::uint64_t addr, std::uint64_t size,
                                            StackId stack, HeapOp op) {
  current().emplace_back(time_ns, addr, size, stack, op);
}

void FrameCollector::on_alloc(const reader::AllocRecord& r) {
  ++out_.counts.alloc;
  ++out_.counts.by_function[static_cast<std::size_t>(r.fn)];
  saw_event(r.time_ns);
  push(r.time_ns, r.addr, r.size, r.stack, HeapOp::kAlloc);
}

void FrameCollector::on_free(const reader::FreeRecord& r) {
  ++out_.counts.free;
  saw_event(r.time_ns);
  push(r.time_ns, r.addr, 0, {}, HeapOp::kFree);
}

void FrameCollector::on_realloc(const reader::ReallocRecord& r) {
  ++out_.counts.realloc;
  ++out_.counts.by_function[static_cast<std::size_t>(r.fn)];
  saw_event(r.free_ns);
  saw_time(r.alloc_ns);
  current().push_back({r.free_ns, r.old_addr, 0, {}, HeapOp::kFree, true});
  current().push_back({r.alloc_ns, r.new_addr, r.size, r.stack, HeapOp::kAlloc, true});
}

void FrameCollector::on_mmap(const reader::MmapRecord& r) {
  ++out_.counts.mmap;
  saw_event(r.time_ns);
  current().push_back({r.time_ns, r.addr, r.size, r.stack, HeapOp::kMmap});
}

void FrameCollector::on_munmap(const reader::MunmapRecord& r) {
  ++out_.counts.munmap;
  saw_event(r.time_ns);
  current().push_back({r.time_ns, r.addr, r.size, {}, HeapOp::kMunmap});
}

// FORMAT.md: the old range is released at the free time, the new one mapped
// at the allocation time.
void FrameCollector::on_mremap(const reader::MremapRecord& r) {
  ++out_.counts.mremap;
  saw_event(r.free_ns);
  saw_time(r.alloc_ns);
  current().push_back({r.free_ns, r.old_addr, r.old_size, {}, HeapOp::kMunmap});
  current().push_back({r.alloc_ns, r.new_addr, r.new_size, r.stack, HeapOp::kMmap});
}

void FrameCollector::on_stack(const reader::StackRecord& r) {
  ++out_.counts.stacks;
  out_.meta.emplace_back(r);
}

void FrameCollector::on_module_load(const reader::ModuleLoadRecord& r) {
  ++out_.counts.modules;
  out_.meta.emplace_back(r);
}

void FrameCollector::on_module_unload(const reader::ModuleUnloadRecord& r) { out_.meta.emplace_back(r); }

void FrameCollector::on_thread_start(const reader::ThreadStartRecord& r) {
  saw_time(r.time_ns);
  out_.meta.emplace_back(r);
}

void FrameCollector::on_thread_name(const reader::ThreadNameRecord& r) { out_.meta.emplace_back(r); }

void FrameCollector::on_thread_exit(const reader::ThreadExitRecord& r) {
  saw_time(r.time_ns);
  out_.meta.emplace_back(r);
}

void FrameCollector::on_rss(const reader::RssRecord& r) {
  ++out_.counts.rss_samples;
  saw_time(r.time_ns);
  out_.rss_max_bytes = std::max(out_.rss_max_bytes, r.rss_bytes);
  out_.rss.push_back(r);
}

void FrameCollector::on_recording(const reader::RecordingRecord& r) {
  ++out_.counts.recording_toggles;
  saw_time(r.time_ns);
  out_.meta.emplace_back(r);
}

void FrameCollector::on_counters(const reader::CountersRecord& r) { out_.meta.emplace_back(r); }

void FrameCollector::on_end(const reader::EndRecord& r) {
  saw_time(r.time_ns);
  out_.meta.emplace_back(r);
}

void FrameCollector::on_exec(const reader::ExecRecord& r) {
  saw_time(r.time_ns);
  out_.meta.emplace_back(r);
}

}  // namespace memrec::analyzer
