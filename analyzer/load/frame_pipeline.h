// Decodes a dump's frames on worker threads and hands them to one consumer in
// file order. Workers run at most a window of frames ahead of the consumer, so
// memory holds the window, not the whole dump, whatever its size.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#include "load/frame_collector.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

struct DecodedFrame {
  FrameData data;
  Status status;
};

class FramePipeline {
 public:
  // How many frames the workers may run ahead: about `window_bytes` of
  // decompressed payload, at least a frame per worker and one more (so that
  // none waits while the consumer holds a frame), at most 4 per worker.
  // Version 5's frames are twice the size of earlier ones, so twice the
  // events each: the same megabyte per worker is half the frames.
  static std::size_t window_for(const reader::Dump& dump, unsigned threads, std::size_t window_bytes);

  // `dump` must outlive the pipeline. `window`: as window_for() says.
  FramePipeline(const reader::Dump& dump, unsigned threads, std::size_t window);
  ~FramePipeline();  // stops the workers and joins them
  FramePipeline(const FramePipeline&) = delete;
  FramePipeline& operator=(const FramePipeline&) = delete;

  // Blocks until frame `i` is decoded. Call with i = 0, 1, 2, ... and
  // release(i) before waiting for i + 1.
  DecodedFrame& wait(std::size_t i);
  void release(std::size_t i);

 private:
  void work();
  void decode_one(reader::FrameDecoder& decoder, std::vector<HeapEvent>& scratch, std::size_t i);

  const reader::Dump& dump_;
  const std::size_t window_;
  std::vector<DecodedFrame> slots_;
  std::vector<char> ready_;   // guarded by mutex_
  std::size_t next_ = 0;      // next frame to claim; guarded by mutex_
  std::size_t released_ = 0;  // frames the consumer is done with; guarded by mutex_
  bool stop_ = false;         // guarded by mutex_
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::thread> workers_;
};

}  // namespace memrec::analyzer
