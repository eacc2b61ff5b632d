// The event coder: drains the threads' rings and codes their events, with the
// stacks, modules and toggles they refer to, into the columns of a frame
// (memrec/format/column_encoder.h); a full frame goes to the compressor.
// One per writer thread (writer_pool.h): the main writer's, g_coder, also
// writes the definitions and notes; a pool writer's codes the events of its
// share of the rings. Its writer thread only (or the thread finishing a
// process without one); it never allocates.
#pragma once

#include <cstdint>
#include <string_view>

#include "frame_compressor.h"
#include "memrec/format/column_encoder.h"
#include "memrec/format/file_header.h"
#include "memrec/format/records.h"
#include "thread_buffer.h"

namespace memrec::preload {

class EventCoder {
 public:
  // Maps the column buffers and the age tables, once per process (a fork
  // child keeps them); false if mmap failed.
  bool setup();
  // Makes this the coder of writer `writer` (0: the main writer), which
  // compresses its frames with `compressor`.
  void bind(std::uint32_t writer, FrameCompressor& compressor) {
    writer_ = writer;
    compressor_ = &compressor;
  }
  std::uint32_t writer() const { return writer_; }
  // Frames are timed from `now` (the recording's start).
  void start(std::uint64_t now) { last_flush_ns_ = now; }

  // Drains `b` up to `end`, a head it published (acquire-loaded).
  void drain(ThreadBuffer& b, std::uint64_t end);
  // Module loads and unloads, stacks and recording toggles not yet written.
  void write_modules();
  void write_stacks();
  void write_toggles();
  // Once a second: a live thread that renamed itself gets a ThreadName record.
  void poll_name(ThreadBuffer& b);

  // Encodes one record that RecordEncoder writes (all but Alloc and Free),
  // starting a new frame if this one is full.
  template <typename Fn>
  void put_record(Fn&& encode) {
    put([&](format::ColumnEncoder& enc) { return enc.record(encode); });
  }

  // Ends the frame of the records coded so far and starts compressing it;
  // with `complete` (and always for the final frame), compresses and writes
  // it before returning. `exec_path`: the process is about to exec it; the
  // frame, even an empty one, ends with an Exec record and is written before
  // returning.
  void flush_frame(bool final_frame, bool complete = false, const char* exec_path = nullptr);
  bool frame_empty() const { return enc_->size() == 0; }
  std::uint64_t last_flush_ns() const { return last_flush_ns_; }

  // What the drains of a cycle found, for the writer's sleep (begin_cycle()
  // forgets the last cycle's).
  struct CycleDrains {
    bool busy = false;               // a ring was a quarter full or more
    bool drained = false;            // anything was drained
    std::uint64_t most_drained = 0;  // the most events drained from one ring
  };
  void begin_cycle() { drains_ = CycleDrains{}; }
  const CycleDrains& drains() const { return drains_; }

  // In a fork child: the parent's frame and counts are in the parent's dump.
  void reset_after_fork();

 private:
  template <typename Fn>
  void put(Fn&& encode);
  bool put_plain_event(std::uint64_t tid, const RawEvent& e);
  void put_event(std::uint64_t tid, const RawEvent& e, const RawTail& t);
  void put_thread_event(ThreadBuffer& b, const RawEvent& e);
  void put_marker_event(const ThreadBuffer& b, const RawEvent& e, std::uint64_t at, std::uint64_t mask);
  void put_counters();
  [[gnu::cold]] void fail_record_too_large();

  std::uint32_t writer_ = 0;
  FrameCompressor* compressor_ = &g_compressor;
  std::byte* raw_ = nullptr;       // kRawBytes: where ColumnEncoder encodes a record before splitting it
  std::byte* columns_ = nullptr;   // kColumnCount × kColumnBytes
  std::byte* ages_mem_ = nullptr;  // AgeCoder::kMemoryBytes: its tables
  format::AgeCoder* ages_ = nullptr;
  alignas(format::AgeCoder) unsigned char ages_storage_[sizeof(format::AgeCoder)] = {};
  format::ColumnEncoder* enc_ = nullptr;
  alignas(format::ColumnEncoder) unsigned char enc_storage_[sizeof(format::ColumnEncoder)] = {};
  std::uint64_t current_tid_ = 0;   // the thread the frame's last Thread record names
  std::uint32_t next_stack_ = 1;    // the main writer's: stacks below it are written
  std::uint32_t frame_stacks_ = 0;  // a pool writer's: one past the highest stack id the frame uses
  std::uint32_t toggles_read_ = 0;
  std::uint64_t events_ = 0;
  std::uint64_t frame_earliest_ns_ = format::kNoEarliest;  // of the frame's heap events so far
  std::uint64_t last_flush_ns_ = 0;
  CycleDrains drains_;
};

extern constinit EventCoder g_coder;

template <typename Fn>
void EventCoder::put(Fn&& encode) {
  if (!encode(*enc_)) {
    flush_frame(false);
    if (!encode(*enc_)) fail_record_too_large();
  }
  if (enc_->holds_at_least(kFrameSoftLimit)) flush_frame(false);
}

}  // namespace memrec::preload
