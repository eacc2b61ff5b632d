// Turns one frame's records into FrameData: counts, the metadata records in
// order, and the heap events grouped by thread. Frames are collected
// independently (in parallel) and folded into a LoadedDump in file order.
#pragma once

#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "load/loaded_dump.h"
#include "memrec/format/file_header.h"
#include "memrec/reader/records.h"

namespace memrec::analyzer {

struct FrameData {
  RecordCounts counts;
  // Records that shape the model, in frame order: the first Thread record of
  // each tid, ThreadStart/Name/Exit, Stack, ModuleLoad/Unload, Recording,
  // Counters, End.
  std::vector<reader::Record> meta;
  // (tid, that thread's heap events in this frame), tids in first-seen order.
  std::vector<std::pair<std::uint64_t, std::vector<HeapEvent>>> events;
  std::uint64_t rss_max_bytes = 0;
  std::vector<reader::RssRecord> rss;  // the samples, in frame order
  std::optional<std::uint64_t> last_time_ns;
  // The earliest heap or mapping event's time (a Realloc's or Mremap's
  // release); kNoEarliest without events. The frame's note must agree.
  std::uint64_t earliest_event_ns = format::kNoEarliest;
};

class FrameCollector final : public reader::RecordVisitor {
 public:
  // `max_events` (if known) bounds the frame's heap events, e.g. its
  // decompressed bytes over the smallest event record: the one list they are
  // decoded into is reserved that large, so filling it never copies
  // (untouched capacity costs address space, not resident memory).
  explicit FrameCollector(FrameData& out, std::size_t max_events = 0) : out_(out), max_events_(max_events) {}
  // The same, decoding into `scratch`'s room (a decoding thread's, kept from
  // frame to frame): a frame of several threads' events, whose events are
  // copied out per thread, gives the room back in finish(). A list made
  // afresh for every frame was faulted in afresh too: a tenth of a 2-thread
  // dump's load went to the kernel's page faults.
  FrameCollector(FrameData& out, std::size_t max_events, std::vector<HeapEvent>& scratch)
      : out_(out), max_events_(max_events), scratch_(&scratch) {
    events_.swap(scratch);
    events_.clear();
  }

  // Splits the decoded events into FrameData::events, each thread's list
  // sized exactly, and sets the frame's times: call once, after the frame's
  // last record.
  void finish();

  void on_thread(const reader::ThreadRecord& r) override;
  void on_alloc(const reader::AllocRecord& r) override;
  void on_free(const reader::FreeRecord& r) override;
  void on_realloc(const reader::ReallocRecord& r) override;
  void on_mmap(const reader::MmapRecord& r) override;
  void on_munmap(const reader::MunmapRecord& r) override;
  void on_mremap(const reader::MremapRecord& r) override;
  void on_stack(const reader::StackRecord& r) override;
  void on_module_load(const reader::ModuleLoadRecord& r) override;
  void on_module_unload(const reader::ModuleUnloadRecord& r) override;
  void on_thread_start(const reader::ThreadStartRecord& r) override;
  void on_thread_name(const reader::ThreadNameRecord& r) override;
  void on_thread_exit(const reader::ThreadExitRecord& r) override;
  void on_rss(const reader::RssRecord& r) override;
  void on_recording(const reader::RecordingRecord& r) override;
  void on_counters(const reader::CountersRecord& r) override;
  void on_end(const reader::EndRecord& r) override;
  void on_exec(const reader::ExecRecord& r) override;
  void on_marker(const reader::MarkerRecord& r) override;

 private:
  void saw_time(std::uint64_t t);
  void saw_event(std::uint64_t t);  // a heap or mapping event's (first) time
  // The frame's events in record order, each run of one thread's events
  // begun by its Thread record (the decoder guarantees one came first).
  std::vector<HeapEvent>& current() { return events_; }
  // Appends an event to the current thread's run, from its fields.
  void push(std::uint64_t time_ns, std::uint64_t addr, std::uint64_t size, StackId stack, HeapOp op);

  // A run of one thread's events in `events_`, from `begin` to the next run's.
  struct Run {
    std::size_t stream;  // into FrameData::events
    std::size_t begin;
  };

  FrameData& out_;
  std::unordered_map<std::uint64_t, std::size_t> stream_of_tid_;
  std::vector<HeapEvent> events_;
  std::vector<Run> runs_;
  std::size_t max_events_ = 0;
  std::vector<HeapEvent>* scratch_ = nullptr;  // where finish() gives events_'s room back
  // FrameData's last_time_ns and earliest_event_ns, until finish().
  std::uint64_t latest_ns_ = 0;
  bool timed_ = false;  // latest_ns_ is set
  std::uint64_t earliest_ns_ = format::kNoEarliest;
};

}  // namespace memrec::analyzer
