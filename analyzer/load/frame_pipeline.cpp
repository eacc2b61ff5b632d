// Workers claim frames in order under one mutex; a frame's decoding runs
// unlocked. The mutex is taken twice per frame (thousands of events), so it
// is never contended enough to matter.
#include "load/frame_pipeline.h"

#include <algorithm>
#include <exception>
#include <utility>

#include <fmt/format.h>

#include "load/helper_priority.h"

namespace memrec::analyzer {

std::size_t FramePipeline::window_for(const reader::Dump& dump, unsigned threads, std::size_t window_bytes) {
  const std::size_t workers = std::max(threads, 1u);
  std::uint64_t payload = 0;
  for (const reader::FrameInfo& frame : dump.index.frames) payload += frame.decompressed_bytes;
  const std::size_t frames = dump.index.frames.size();
  const std::uint64_t average = frames == 0 ? 1 : std::max<std::uint64_t>(payload / frames, 1);
  const std::size_t by_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(window_bytes / average, 4 * workers));
  return std::clamp(by_bytes, workers + 1, 4 * workers);
}

FramePipeline::FramePipeline(const reader::Dump& dump, unsigned threads, std::size_t window)
    : dump_(dump),
      window_(std::max<std::size_t>(window, 1)),
      slots_(dump.index.frames.size()),
      ready_(dump.index.frames.size(), 0) {
  const std::size_t n = std::min<std::size_t>(std::max(threads, 1u), slots_.size());
  for (std::size_t t = 0; t < n; ++t) workers_.emplace_back([this] { work(); });
}

FramePipeline::~FramePipeline() {
  {
    const std::lock_guard lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void FramePipeline::work() {
  lower_helper_priority();
  reader::FrameDecoder decoder;
  std::vector<HeapEvent> scratch;  // the collectors' room, reused (frame_collector.h)
  for (;;) {
    std::size_t i = 0;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stop_ || next_ >= slots_.size() || next_ < released_ + window_; });
      if (stop_ || next_ >= slots_.size()) return;
      i = next_++;
    }
    decode_one(decoder, scratch, i);
    {
      const std::lock_guard lock(mutex_);
      ready_[i] = 1;
    }
    changed_.notify_all();
  }
}

void FramePipeline::decode_one(reader::FrameDecoder& decoder, std::vector<HeapEvent>& scratch, std::size_t i) {
  DecodedFrame& slot = slots_[i];
  try {
    // The smallest heap event record is a Free of three bytes (tag, time and
    // address deltas; FORMAT.md "Records"); a Realloc or Mremap, at least
    // eight, makes two events.
    const reader::FrameInfo& frame = dump_.index.frames[i];
    FrameCollector collector(slot.data, frame.decompressed_bytes / 3, scratch);
    slot.status = decoder.decode(dump_.bytes(), frame, dump_.name(), collector);
    collector.finish();
    // The note in front of the zstd data has no checksum: the events vouch for it.
    if (slot.status.ok() && frame.earliest_ns && *frame.earliest_ns != slot.data.earliest_event_ns) {
      slot.status = Error{ErrorCode::kCorrupt,
                          fmt::format("{}: corrupt frame at offset {}: it notes {} as its earliest event time, its "
                                      "events start at {}",
                                      dump_.name(), frame.offset, *frame.earliest_ns, slot.data.earliest_event_ns)};
    }
  } catch (const std::exception& e) {  // std::bad_alloc on a dump too big for this machine
    slot.status = Error{ErrorCode::kInternal, dump_.name() + ": decoding failed: " + e.what()};
  }
}

DecodedFrame& FramePipeline::wait(std::size_t i) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return ready_[i] != 0; });
  return slots_[i];
}

void FramePipeline::release(std::size_t i) {
  slots_[i] = DecodedFrame{};
  {
    const std::lock_guard lock(mutex_);
    released_ = i + 1;
  }
  changed_.notify_all();
}

}  // namespace memrec::analyzer
