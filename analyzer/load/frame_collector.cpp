// One small handler per record kind. Runs on the loader's worker threads, one
// collector per frame; it shares nothing.
#include "load/frame_collector.h"

#include <algorithm>

namespace memrec::analyzer {

// Inlined: two calls per heap event were a tenth of the collector's work.
// The times are kept in members and written to FrameData in finish(): through
// `out_` and its optional, each was a load, a test and a store per event.
[[gnu::always_inline]] inline void FrameCollector::saw_time(std::uint64_t t) {
  latest_ns_ = std::max(latest_ns_, t);
  timed_ = true;
}

[[gnu::always_inline]] inline void FrameCollector::saw_event(std::uint64_t t) {
  earliest_ns_ = std::min(earliest_ns_, t);
  saw_time(t);
}

// Every thread's events go to one list, reserved once per frame: a list per
// thread, reserved whole, cost each of a frame's first threads the frame's
// size in address space, and lists left to grow touched up to twice their
// events. Either way a thread held its frame's list while its events waited
// for their turn, so a dump of thousands of threads alive at once needed a
// megabyte or more per thread.
void FrameCollector::on_thread(const reader::ThreadRecord& r) {
  const auto [it, inserted] = stream_of_tid_.try_emplace(r.tid, out_.events.size());
  if (inserted) {
    out_.events.emplace_back(r.tid, std::vector<HeapEvent>{});
    out_.meta.emplace_back(r);
    if (events_.capacity() < max_events_) events_.reserve(max_events_);
  }
  if (runs_.empty() || runs_.back().stream != it->second) runs_.push_back(Run{it->second, events_.size()});
}

// One thread's frame (always so in a one-thread dump) keeps the list as it
// is; else each thread gets a list of exactly its events, copied run by run.
void FrameCollector::finish() {
  if (timed_) out_.last_time_ns = latest_ns_;
  out_.earliest_event_ns = earliest_ns_;
  if (out_.events.size() == 1) {
    out_.events.front().second = std::move(events_);
    return;
  }
  const auto run_end = [&](std::size_t i) { return i + 1 < runs_.size() ? runs_[i + 1].begin : events_.size(); };
  std::vector<std::size_t> counts(out_.events.size(), 0);
  for (std::size_t i = 0; i < runs_.size(); ++i) counts[runs_[i].stream] += run_end(i) - runs_[i].begin;
  for (std::size_t s = 0; s < counts.size(); ++s) out_.events[s].second.reserve(counts[s]);
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    std::vector<HeapEvent>& list = out_.events[runs_[i].stream].second;
    list.insert(list.end(), events_.begin() + static_cast<std::ptrdiff_t>(runs_[i].begin),
                events_.begin() + static_cast<std::ptrdiff_t>(run_end(i)));
  }
  if (scratch_ != nullptr) {
    events_.clear();
    scratch_->swap(events_);
  }
  events_ = std::vector<HeapEvent>();  // not `= {}`, which would keep the room
  runs_ = std::vector<Run>();
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
  current().push_back({r.free_ns, r.old_addr, r.old_size, {}, HeapOp::kMunmap, true});
  current().push_back({r.alloc_ns, r.new_addr, r.new_size, r.stack, HeapOp::kMmap, true});
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

void FrameCollector::on_marker(const reader::MarkerRecord& r) {
  saw_time(r.time_ns);
  out_.meta.emplace_back(r);
}

}  // namespace memrec::analyzer
