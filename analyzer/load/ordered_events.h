// Streams a dump's heap events to a sink in the one global order of
// FORMAT.md "Order", holding only a window of them: the report layer calls
// it; it keeps no event after handing it on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "load/dump_loader.h"
#include "load/heap_event.h"
#include "load/loaded_dump.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

// Calls fn(first, count) for each run of equal values in `threads`, in order.
template <typename Fn>
void for_each_run(std::span<const std::uint32_t> threads, Fn&& fn) {
  std::size_t at = 0;
  while (at < threads.size()) {
    std::size_t end = at + 1;
    while (end < threads.size() && threads[end] == threads[at]) ++end;
    fn(at, end - at);
    at = end;
  }
}

class OrderedEventSink {
 public:
  virtual ~OrderedEventSink() = default;
  // `thread` indexes LoadedDump::threads of the dump being streamed. The
  // dump's stacks are complete only once stream_dump returns (dump_loader.h).
  virtual void on_event(const HeapEvent& event, std::uint32_t thread) = 0;
  // A run of consecutive events in merged order, all of one thread: one
  // virtual call per run instead of per event. The default hands them on one by one.
  virtual void on_events(std::span<const HeapEvent> events, std::uint32_t thread) {
    for (const HeapEvent& e : events) on_event(e, thread);
  }
  // Consecutive events in merged order from several threads, `threads[i]`
  // being `events[i]`'s: threads take turns every few events, so runs of one
  // thread are short. The default hands them on as those runs.
  virtual void on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads) {
    for_each_run(threads, [&](std::size_t at, std::size_t n) { on_events(events.subspan(at, n), threads[at]); });
  }
};

// A sink that takes each event with a 32-bit tag from the sink that saw it
// before: SinkThread carries them (memrec view's allocation table takes the
// replay's matched rows as tags, model/stack_replay.h).
class TaggedEventSink {
 public:
  virtual ~TaggedEventSink() = default;
  // tags.size() == events.size(); a run of one thread, as on_events.
  virtual void on_tagged_events(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                                std::uint32_t thread) = 0;
  // Events of several threads, as OrderedEventSink::on_merged; the default
  // hands them on as runs of one thread.
  virtual void on_tagged_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                                std::span<const std::uint32_t> threads) {
    for_each_run(threads, [&](std::size_t at, std::size_t n) {
      on_tagged_events(events.subspan(at, n), tags.subspan(at, n), threads[at]);
    });
  }
};

struct StreamedDump {
  LoadedDump dump;                  // metadata only: `streams` is empty
  std::optional<Error> stopped;     // a frame that did not decode: the events before it were streamed
  std::uint64_t events = 0;         // heap and mmap events handed to the sink
  std::uint64_t max_pending = 0;    // the most events held back at once, waiting for their turn
  std::uint64_t max_in_memory = 0;  // the most of them in memory at once (LoadOptions::held_in_memory)
  std::uint64_t spilled = 0;        // events that waited in the spill file
};

// Two passes over the frames. The first finds each frame's earliest event
// time (from the frame's note, FORMAT.md "Frames"; a dump without notes is
// decoded for it); the second folds frames in file order and releases the held-back
// events earlier than every later frame's earliest time, merged by time
// (releases first at equal times, each thread's own order kept). The writer
// drains threads one after another, so a frame may hold events older than the
// previous frame's: the first pass is what makes the release exact.
Result<StreamedDump> stream_dump(const std::string& path, const LoadOptions& options, OrderedEventSink& sink);
// The same for a dump already open (tests: a dump in memory).
Result<StreamedDump> stream_dump(reader::Dump dump, const LoadOptions& options, OrderedEventSink& sink);

}  // namespace memrec::analyzer
