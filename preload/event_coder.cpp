// The event coder (see event_coder.h). Every stack an event uses is written
// before that event because the writer notes the rings' heads before it
// writes the stacks defined so far, and drains only up to those heads
// (FORMAT.md, "Stack").
#include "event_coder.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "clock.h"
#include "dump_file.h"
#include "malloc_owner.h"
#include "memrec/format/record_encoder.h"
#include "memrec/format/recorder_threads.h"
#include "module_registry.h"
#include "order_stamp.h"
#include "os.h"
#include "proc_sampler.h"
#include "recorder_state.h"
#include "stack_table.h"
#include "toggle_signal.h"
#include "writer.h"
#include "writer_pool.h"

namespace memrec::preload {

constinit EventCoder g_coder;

namespace {

constexpr std::uint64_t kReleaseEvery = 256;  // events drained before freeing slots for the owner
constexpr std::uint64_t kPrefetchAhead = 8;   // events ahead whose address coding's slots are prefetched
// Events drained between two chunks of compression (FrameCompressor::step);
// a multiple of kReleaseEvery.
constexpr std::uint64_t kCompressEvery = 1024;

// Recording toggles (signal, control socket, start) noted from any thread,
// even a signal handler, for the writer to record in order.
struct Toggle {
  std::atomic<std::uint32_t> ready;
  bool on;
  format::Source source;
  std::uint64_t time_ns;
};
constexpr std::uint32_t kToggleSlots = 256;
constinit Toggle g_toggles[kToggleSlots];
std::atomic<std::uint32_t> g_toggle_next{0};

std::string_view event_name(const RawEvent& e, char (&storage)[17]) {
  std::memcpy(storage, &e.addr, 16);
  storage[16] = '\0';
  return std::string_view(storage, strnlen(storage, 16));
}

}  // namespace

bool EventCoder::setup() {
  if (raw_ == nullptr) {
    raw_ = static_cast<std::byte*>(os::map(kRawBytes));
    columns_ = static_cast<std::byte*>(os::map(format::kColumnCount * kColumnBytes));
    ages_mem_ = static_cast<std::byte*>(os::map(format::AgeCoder::kMemoryBytes));
  }
  if (raw_ == nullptr || columns_ == nullptr || ages_mem_ == nullptr) return false;
  format::ColumnBuffers columns;
  for (std::size_t i = 0; i < format::kColumnCount; ++i) {
    columns[i] = std::span<std::byte>(columns_ + i * kColumnBytes, kColumnBytes);
  }
  ages_ = new (ages_storage_) format::AgeCoder(std::span<std::byte>(ages_mem_, format::AgeCoder::kMemoryBytes));
  enc_ = new (enc_storage_) format::ColumnEncoder(columns, std::span<std::byte>(raw_, kRawBytes), *ages_);
  return true;
}

void EventCoder::reset_after_fork() {
  std::byte* const raw = raw_;
  std::byte* const columns = columns_;
  std::byte* const ages_mem = ages_mem_;
  const std::uint32_t writer = writer_;
  FrameCompressor* const compressor = compressor_;
  *this = EventCoder{};
  writer_ = writer;
  compressor_ = compressor;
  raw_ = raw;
  columns_ = columns;
  // The tables must start zero-filled: the parent's entries carry sequence
  // numbers that a new AgeCoder would take for its own.
  ages_mem_ = ages_mem;
  if (ages_mem_ != nullptr) std::memset(ages_mem_, 0, format::AgeCoder::kMemoryBytes);
  if (writer_ != 0) return;
  for (Toggle& t : g_toggles) t.ready.store(0);
  g_toggle_next.store(0);
}

void EventCoder::fail_record_too_large() { g_dump.fail("a record does not fit in a frame of ", E2BIG); }

// ---- frames -------------------------------------------------------------

void EventCoder::put_counters() {
  using format::Counter;
  // Read here, at a frame's end, by the writer itself: nothing on the hot
  // path counts the recorder's own cost. None without a writer thread.
  const std::uint64_t cpu_ns = recorder_cpu_ns(writer_);
  if (writer_ != 0) {
    // A pool writer counts what it did; the process's counts are the main
    // writer's (FORMAT.md, "Counters"): a reader adds the writers' up.
    const format::CounterValue own[] = {
        {Counter::kEvents, events_},
        {Counter::kFrames, compressor_->frames() + 1},
        {Counter::kBytesWritten, compressor_->bytes_written()},
        {Counter::kWriter, writer_},
        {static_cast<Counter>(format::recorder_cpu_key(writer_)), cpu_ns},
        {static_cast<Counter>(format::recorder_events_key(writer_)), cpu_ns != 0 ? events_ : 0},
    };
    enc_->record([&](format::RecordEncoder& enc) { return enc.counters(std::span(own)); });
    return;
  }
  watch_toggle_signal(now_ns(), /*force=*/true);
  format::CounterValue values[] = {
      {Counter::kEvents, events_},
      {Counter::kMissedReentrant, counter(Counter::kMissedReentrant)},
      {Counter::kMissedNoBuffer, counter(Counter::kMissedNoBuffer)},
      {Counter::kMissedStopped, counter(Counter::kMissedStopped)},
      {Counter::kDroppedLossy, counter(Counter::kDroppedLossy)},
      {Counter::kBackpressureWaits, counter(Counter::kBackpressureWaits)},
      {Counter::kBackpressureWaitNs, counter(Counter::kBackpressureWaitNs)},
      {Counter::kStacks, counter(Counter::kStacks)},
      {Counter::kTruncatedStacks, counter(Counter::kTruncatedStacks)},
      {Counter::kStackTableFull, counter(Counter::kStackTableFull)},
      {Counter::kBootstrapAllocs, counter(Counter::kBootstrapAllocs)},
      {Counter::kFrames, compressor_->frames() + 1},
      {Counter::kBytesWritten, compressor_->bytes_written()},
      {Counter::kThreads, counter(Counter::kThreads)},
      {Counter::kUnwindFailed, counter(Counter::kUnwindFailed)},
      {Counter::kForeignMalloc, foreign_malloc()},
      {Counter::kToggleTakenNs, toggle_taken_ns()},
      {Counter::kToggleChained, toggle_chained()},
      {Counter::kMarkersLost, counter(Counter::kMarkersLost)},
      {Counter::kStampTsc, stamp_tsc() ? 1u : 0u},
      {Counter::kTscReadNs, tsc_read_cost_ns()},
      {static_cast<Counter>(format::recorder_cpu_key(0)), cpu_ns},
      {static_cast<Counter>(format::recorder_events_key(0)), cpu_ns != 0 ? events_ : 0},
  };
  // The facts after the counts go in only once set: most dumps have none.
  std::size_t n = static_cast<std::size_t>(Counter::kUnwindFailed);
  for (std::size_t i = n; i < std::size(values); ++i) {
    if (values[i].value != 0) values[n++] = values[i];
  }
  enc_->record([&](format::RecordEncoder& enc) { return enc.counters(std::span(values, n)); });
}

void EventCoder::flush_frame(bool final_frame, bool complete, const char* exec_path) {
  const std::uint64_t now = now_ns();
  if (g_dump.failed()) return;
  // The frame before first: frames stay in order, and the payload buffer is free again.
  compressor_->finish();
  if (g_dump.failed()) return;
  if (enc_->size() == 0 && !final_frame && exec_path == nullptr) {
    last_flush_ns_ = now;
    return;
  }
  // Before compressing: a lazily opened file writes its header through the
  // compressor's buffer.
  if (!g_dump.open(compressor_->scratch())) return;
  put_counters();
  // At or after every stamp handed out, which may run ahead of the clock (order_stamp.h).
  if (final_frame) {
    const std::uint64_t end_ns = stamp_to_ns(publish_tick());
    enc_->record([&](format::RecordEncoder& enc) { return enc.end(end_ns); });
  } else if (exec_path != nullptr) {
    const std::uint64_t exec_ns = stamp_to_ns(publish_tick());
    enc_->record([&](format::RecordEncoder& enc) { return enc.exec(exec_ns, 0, exec_path); });
    complete = true;
  }
  const std::uint64_t fill_ns = now - last_flush_ns_;
  last_flush_ns_ = now;
  const std::size_t payload_bytes = enc_->finish(compressor_->payload(), compressor_->column_ends());
  const std::uint64_t earliest = frame_earliest_ns_;
  // The main writer's frame defines the stacks below next_stack_; a pool
  // writer's must be placed after the frame that defines its last one.
  const FramePlacement placement{writer_ == 0 ? next_stack_ : 0, writer_ == 0 ? 0 : frame_stacks_};
  enc_->begin_frame();
  current_tid_ = 0;
  frame_earliest_ns_ = format::kNoEarliest;
  frame_stacks_ = 0;
  if (payload_bytes == 0) {
    // Cannot happen: the payload buffer holds the largest frame's columns.
    g_dump.fail("a frame's columns do not fit while writing ", E2BIG);
    return;
  }
  if (!compressor_->begin(payload_bytes, earliest, fill_ns, placement)) return;
  if (final_frame || complete) compressor_->finish();
}

// ---- events -------------------------------------------------------------

// An Alloc or Free of the thread the frame's last Thread record names, coded
// with no generic put(): nearly every event drained is one, and the dispatch
// cost the writer as many instructions as coding the event (callgrind). False
// when the event needs put_event()'s way: another kind or thread, or a full frame.
[[gnu::always_inline]] inline bool EventCoder::put_plain_event(std::uint64_t tid, const RawEvent& e) {
  if (current_tid_ != tid) return false;
  format::ColumnEncoder& enc = *enc_;
  bool written;
  if (e.kind == EventKind::kAlloc) {
    const std::uint64_t time_ns = stamp_to_ns(e.time_ns);
    written = enc.alloc(static_cast<format::AllocFn>(e.fn), time_ns, e.addr, e.size, e.stack);
    if (!written) return false;  // nothing was written: put_event() flushes and writes it again
    frame_stacks_ = std::max(frame_stacks_, e.stack + 1);
    frame_earliest_ns_ = std::min(frame_earliest_ns_, time_ns);
  } else if (e.kind == EventKind::kFree) {
    const std::uint64_t time_ns = stamp_to_ns(e.time_ns);
    written = enc.free(time_ns, e.addr);
    if (!written) return false;
    frame_earliest_ns_ = std::min(frame_earliest_ns_, time_ns);
  } else {
    return false;
  }
  if (enc.holds_at_least(kFrameSoftLimit)) flush_frame(false);
  events_ += 1;
  return true;
}

// `t`: the event's second slot, for the kinds that take one (slots_of).
void EventCoder::put_event(std::uint64_t tid, const RawEvent& e, const RawTail& t) {
  using format::AllocFn;
  // The Thread record and the event go into the same frame: if either does
  // not fit, the frame is flushed (forgetting the thread) and both are
  // written again into the next one.
  // Converted once: put() may call this lambda twice.
  const std::uint64_t time_ns = stamp_to_ns(e.time_ns);
  const std::uint64_t alloc_ns =
      e.kind == EventKind::kRealloc || e.kind == EventKind::kMremap ? stamp_to_ns(t.alloc_ns) : 0;
  put([&](format::ColumnEncoder& enc) {
    if (current_tid_ != tid) {
      if (!enc.record([&](format::RecordEncoder& r) { return r.thread(tid); })) return false;
      current_tid_ = tid;
    }
    bool written = false;
    switch (e.kind) {
      case EventKind::kAlloc:
        written = enc.alloc(static_cast<AllocFn>(e.fn), time_ns, e.addr, e.size, e.stack);
        break;
      case EventKind::kFree:
        written = enc.free(time_ns, e.addr);
        break;
      case EventKind::kRealloc:
        written = enc.record([&](format::RecordEncoder& r) {
          return r.realloc(static_cast<AllocFn>(e.fn), time_ns, t.old_addr, alloc_ns, e.addr, e.size, e.stack);
        });
        break;
      case EventKind::kMmap:
        written = enc.record([&](format::RecordEncoder& r) {
          return r.mmap(time_ns, e.addr, e.size, static_cast<std::uint32_t>(t.old_size >> 32),
                        static_cast<std::uint32_t>(t.old_size), e.stack);
        });
        break;
      case EventKind::kMunmap:
        written = enc.record([&](format::RecordEncoder& r) { return r.munmap(time_ns, e.addr, e.size); });
        break;
      case EventKind::kMremap:
        written = enc.record([&](format::RecordEncoder& r) {
          return r.mremap(time_ns, t.old_addr, t.old_size, alloc_ns, e.addr, e.size, e.stack);
        });
        break;
      default:
        return true;
    }
    // Here, not after put(): put() may flush the frame that holds this event.
    // A Realloc's or Mremap's release comes first, at time_ns.
    if (written) {
      frame_earliest_ns_ = std::min(frame_earliest_ns_, time_ns);
      // Only these kinds carry a stack: a Free's or Munmap's `stack` is
      // whatever the slot held before (FramePlacement would wait for an id
      // nobody defines).
      const bool has_stack = e.kind == EventKind::kAlloc || e.kind == EventKind::kRealloc ||
                             e.kind == EventKind::kMmap || e.kind == EventKind::kMremap;
      if (has_stack) frame_stacks_ = std::max(frame_stacks_, e.stack + 1);
    }
    return written;
  });
  events_ += 1;
}

void EventCoder::put_thread_event(ThreadBuffer& b, const RawEvent& e) {
  char name_storage[17];
  const std::string_view name = event_name(e, name_storage);
  const std::uint64_t time_ns = stamp_to_ns(e.time_ns);
  if (e.kind == EventKind::kThreadStart) {
    put_record([&](format::RecordEncoder& enc) { return enc.thread_start(b.tid, time_ns, name); });
  } else {
    if (!b.name_known || name != std::string_view(b.last_name, strnlen(b.last_name, 16))) {
      put_record([&](format::RecordEncoder& enc) { return enc.thread_name(b.tid, name); });
    }
    put_record([&](format::RecordEncoder& enc) { return enc.thread_exit(b.tid, time_ns); });
  }
  std::memcpy(b.last_name, name_storage, 16);
  b.name_known = true;
  current_tid_ = 0;
}

// A memrec_mark() call: its label is in the slots after the event's.
void EventCoder::put_marker_event(const ThreadBuffer& b, const RawEvent& e, std::uint64_t at, std::uint64_t mask) {
  char label[label_slots(format::kMaxMarkerLabelBytes) * sizeof(RingSlot)];
  const std::size_t bytes = e.size < format::kMaxMarkerLabelBytes ? e.size : format::kMaxMarkerLabelBytes;
  for (std::uint64_t i = 1; i <= label_slots(bytes); ++i) {
    std::memcpy(label + (i - 1) * sizeof(RingSlot), &b.slots[(at + i) & mask], sizeof(RingSlot));
  }
  const auto source = static_cast<format::Source>(e.fn);
  // Not in the frame's note, which is of heap and mapping events only (FORMAT.md "Frames").
  const std::uint64_t time_ns = stamp_to_ns(e.time_ns);
  put_record([&](format::RecordEncoder& enc) { return enc.marker(time_ns, source, std::string_view(label, bytes)); });
}

void EventCoder::drain(ThreadBuffer& b, std::uint64_t end) {
  // After the acquire load of `head` that gave `end`: the size the slots up
  // to `end` were written with (thread_buffer.h).
  const std::uint64_t mask = b.mask.load(std::memory_order_relaxed);
  std::uint64_t tail = b.tail.load(std::memory_order_relaxed);
  const std::uint64_t start = tail;
  std::uint64_t drained = 0;
  while (tail < end && !g_dump.failed()) {
    // A slot ahead may be a second slot: its `addr` is then another field,
    // and the prefetch merely useless.
    if (end - tail > kPrefetchAhead) enc_->prefetch(b.slots[(tail + kPrefetchAhead) & mask].event.addr);
    const RawEvent& e = b.slots[tail & mask].event;
    if (!put_plain_event(b.tid, e)) {
      if (e.kind == EventKind::kThreadStart || e.kind == EventKind::kThreadExit) {
        put_thread_event(b, e);
      } else if (e.kind == EventKind::kMarker) {
        put_marker_event(b, e, tail, mask);
      } else {
        put_event(b.tid, e, b.slots[(tail + 1) & mask].tail);
      }
    }
    // The owner commits an event's slots together, so `end` never splits one.
    tail += slots_of(e);
    // Release pairs with the owner's acquire load in reserve(): the slot was
    // read before it is handed back.
    if (++drained % kReleaseEvery == 0) {
      b.tail.store(tail, std::memory_order_release);
      if (drained % kCompressEvery == 0) compressor_->step();
    }
  }
  b.tail.store(end, std::memory_order_release);
  if (end - start >= (mask + 1) / 4) drains_.busy = true;
  if (end != start) drains_.drained = true;
  if (end - start > drains_.most_drained) drains_.most_drained = end - start;
}

// ---- definitions and notes ----------------------------------------------

void EventCoder::write_modules() {
  const std::uint32_t n = module_count();
  for (std::uint32_t i = 0; i < n; ++i) {
    Module& m = module_at(i);
    if (!m.load_written) {
      put_record([&](format::RecordEncoder& enc) {
        return enc.module_load(m.id, m.load_gen, std::string_view(m.path, m.path_size), m.bias,
                               std::as_bytes(std::span(m.build_id, m.build_id_size)),
                               std::span<const format::Segment>(m.segments, m.segment_count));
      });
      m.load_written = true;
    }
    const std::uint64_t unload = m.unload_gen.load(std::memory_order_acquire);
    if (unload != 0 && !m.unload_written) {
      put_record([&](format::RecordEncoder& enc) { return enc.module_unload(m.id, unload); });
      m.unload_written = true;
    }
  }
}

void EventCoder::write_stacks() {
  const std::uint32_t end = stack_id_end();
  for (; next_stack_ < end; ++next_stack_) {
    const StackView v = stack_view(next_stack_);
    if (v.valid) {
      const std::uint8_t flags = v.truncated ? format::kStackTruncated : 0;
      put([&](format::ColumnEncoder& enc) { return enc.stack(next_stack_, v.module_gen, flags, v.ips); });
    }
    // The record holds a copy of the frames now.
    stack_written(next_stack_);
  }
}

void EventCoder::write_toggles() {
  for (;;) {
    Toggle& t = g_toggles[toggles_read_ % kToggleSlots];
    // Pairs with the release store in note_recording_toggle().
    if (t.ready.load(std::memory_order_acquire) != toggles_read_ / kToggleSlots + 1) return;
    put_record([&](format::RecordEncoder& enc) { return enc.recording(t.time_ns, t.on, t.source); });
    ++toggles_read_;
  }
}

void EventCoder::poll_name(ThreadBuffer& b) {
  if (b.exited.load(std::memory_order_relaxed) || !b.name_known) return;
  char name[17];
  const std::size_t len = read_thread_name(b.tid, name);
  if (len == 0) return;
  const std::string_view now_name(name, len);
  if (now_name == std::string_view(b.last_name, strnlen(b.last_name, 16))) return;
  put_record([&](format::RecordEncoder& enc) { return enc.thread_name(b.tid, now_name); });
  std::memset(b.last_name, 0, sizeof(b.last_name));
  std::memcpy(b.last_name, name, len);
}

void note_recording_toggle(bool on, std::uint64_t time_ns, format::Source source) {
  const std::uint32_t i = g_toggle_next.fetch_add(1, std::memory_order_relaxed);
  Toggle& t = g_toggles[i % kToggleSlots];
  // A slot still unread from kToggleSlots toggles ago is overwritten; the
  // writer reads them within milliseconds, so that takes a signal storm.
  t.on = on;
  t.source = source;
  t.time_ns = time_ns;
  t.ready.store(i / kToggleSlots + 1, std::memory_order_release);
}

}  // namespace memrec::preload
