// Decodes frames on a few worker threads (each frame has its own delta state,
// FORMAT.md "Frames") and folds them in file order as they arrive: metadata
// records in sequence, heap events appended to their thread's stream.
#include "load/dump_loader.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <utility>
#include <variant>

#include "common/parallel_for.h"
#include "load/frame_collector.h"
#include "load/frame_folder.h"
#include "load/frame_pipeline.h"

namespace memrec::analyzer {
namespace {

// A thread's own times never go back; a tid reused by a later thread can
// interleave with the old one's last frame, so order such a stream by time.
void order_streams(LoadedDump& d) {
  for (auto& stream : d.streams) {
    const auto by_time = [](const HeapEvent& a, const HeapEvent& b) { return a.time_ns < b.time_ns; };
    if (!std::is_sorted(stream.begin(), stream.end(), by_time)) {
      std::stable_sort(stream.begin(), stream.end(), by_time);
    }
  }
}

}  // namespace

RecordCounts& RecordCounts::operator+=(const RecordCounts& o) {
  alloc += o.alloc;
  free += o.free;
  realloc += o.realloc;
  mmap += o.mmap;
  munmap += o.munmap;
  mremap += o.mremap;
  stacks += o.stacks;
  modules += o.modules;
  rss_samples += o.rss_samples;
  recording_toggles += o.recording_toggles;
  for (std::size_t i = 0; i < by_function.size(); ++i) by_function[i] += o.by_function[i];
  return *this;
}

namespace {

// The shared loop: decodes the frames in parallel and folds them in order.
// `on_events` null keeps the events in LoadedDump::streams.
Result<LoadedDump> load_frames(reader::Dump dump, const LoadOptions& options, const FrameEventsFn* on_events,
                               std::optional<Error>* partial) {
  unsigned threads = options.threads;
  if (threads == 0) threads = worker_threads();
  LoadedDump d;
  d.path = dump.name();
  d.header = dump.header;
  d.facts.file_bytes = dump.file_bytes();
  std::vector<std::size_t> cut_frames;
  StackBuilder stacks(d.stacks, options);
  {
    // A megabyte of payload per worker: what four frames each of 256 KiB
    // were, before version 5.
    FramePipeline pipeline(dump, threads, FramePipeline::window_for(dump, threads, std::size_t{threads} << 20));
    FrameFolder folder(d, stacks, options);
    const std::size_t frames = dump.index.frames.size();
    for (std::size_t i = 0; i < frames; ++i) {
      DecodedFrame& frame = pipeline.wait(i);
      // The first failure in file order decides; a frame whose tail was
      // never written ends the dump there instead, or is skipped where other
      // writers' frames may follow it.
      if (!frame.status.ok()) {
        cut_frames.push_back(i);
        if (frame.status.error().code != ErrorCode::kTruncated) {
          if (partial == nullptr) return frame.status.error();
          *partial = frame.status.error();
        } else if (dump.reads_past_cut_frames()) {
          pipeline.release(i);
          continue;
        }
        break;
      }
      if (on_events != nullptr) {
        folder.add_meta(frame.data);
        (*on_events)(d, i, frame.data);
      } else {
        folder.add(frame.data);
      }
      pipeline.release(i);
      if (options.progress) options.progress(i + 1, frames);
    }
  }
  // Only now that the workers are joined may the frame index change.
  if (partial != nullptr && *partial) {
    dump.truncate_at_frame(cut_frames.back());
    cut_frames.pop_back();
  }
  dump.drop_cut_frames(cut_frames);
  if (const auto failed = stacks.finish()) return Error{ErrorCode::kInternal, d.path + ": " + *failed};
  d.stacks.seal();
  order_streams(d);
  d.facts.frames = dump.index.frames.size();
  d.facts.truncated_at = dump.index.truncated_at;
  d.facts.cut = dump.index.cut;
  return d;
}

}  // namespace

Result<LoadedDump> load_dump(reader::Dump dump, const LoadOptions& options) {
  return load_frames(std::move(dump), options, nullptr, nullptr);
}

Result<LoadedDump> load_dump_streaming(reader::Dump dump, const LoadOptions& options, const FrameEventsFn& on_events,
                                       std::optional<Error>* partial) {
  return load_frames(std::move(dump), options, &on_events, partial);
}

Result<LoadedDump> load_dump(const std::string& path, const LoadOptions& options) {
  auto dump = reader::open_dump(path);
  if (!dump) return dump.error();
  return load_dump(std::move(*dump), options);
}

}  // namespace memrec::analyzer
