// Builds the InfoReport: replays the heap, then groups what is live at the
// end by stack and resolves each frame to a module.
#include "reports/info_report.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "load/ordered_events.h"
#include "memrec/format/recorder_threads.h"
#include "model/module_map.h"

namespace memrec::analyzer {
namespace {

std::vector<LeakFrame> resolve_frames(const LoadedDump& d, const ModuleMap& modules, const StackTable::Stack& stack) {
  std::vector<LeakFrame> frames;
  frames.reserve(stack.depth);
  d.stacks.for_each_ip(stack, [&](std::uint64_t ip) {
    LeakFrame f{ip, std::nullopt};
    if (const ModuleInfo* m = modules.find(ip, stack.module_gen)) {
      f.module = static_cast<std::size_t>(m - d.modules.data());
    }
    frames.push_back(f);
  });
  return frames;
}

std::vector<LeakGroup> group_leaks(const LoadedDump& d, const HeapReplay& heap) {
  std::unordered_map<StackId, LeakGroup> by_stack;
  heap.live.for_each([&](std::uint64_t, const LiveBlock& block) {
    LeakGroup& g = by_stack[block.stack];
    g.stack = block.stack;
    ++g.count;
    g.bytes += block.size;
  });
  const ModuleMap modules(d.modules);
  std::vector<LeakGroup> leaks;
  leaks.reserve(by_stack.size());
  for (auto& [id, group] : by_stack) {
    if (const StackTable::Stack* stack = d.stacks.find(id)) {
      group.truncated = stack->truncated;
      group.frames = resolve_frames(d, modules, *stack);
    }
    leaks.push_back(std::move(group));
  }
  std::sort(leaks.begin(), leaks.end(), [](const LeakGroup& a, const LeakGroup& b) {
    return std::tie(b.bytes, b.count, a.stack) < std::tie(a.bytes, a.count, b.stack);
  });
  return leaks;
}

class ReplaySink final : public OrderedEventSink {
 public:
  explicit ReplaySink(HeapReplay& heap) : heap_(heap) {}
  void on_event(const HeapEvent& e, std::uint32_t) override { replay_event(heap_, e); }
  void on_events(std::span<const HeapEvent> events, std::uint32_t) override {
    for (const HeapEvent& e : events) replay_event(heap_, e);
  }

 private:
  HeapReplay& heap_;
};

Result<InfoReport> finish(Result<StreamedDump> streamed, HeapReplay heap) {
  if (!streamed) return streamed.error();
  if (streamed->stopped) return *streamed->stopped;
  InfoReport r;
  r.dump = std::move(streamed->dump);
  r.heap = std::move(heap);
  r.leaks = group_leaks(r.dump, r.heap);
  if (r.dump.last_time_ns && *r.dump.last_time_ns > r.dump.header.start_mono_ns) {
    r.duration_ns = *r.dump.last_time_ns - r.dump.header.start_mono_ns;
  }
  return r;
}

}  // namespace

Result<InfoReport> build_info_report(const std::string& path, const LoadOptions& options) {
  HeapReplay heap;
  ReplaySink sink(heap);
  auto streamed = stream_dump(path, options, sink);
  return finish(std::move(streamed), std::move(heap));
}

Result<InfoReport> build_info_report(reader::Dump dump, const LoadOptions& options) {
  HeapReplay heap;
  ReplaySink sink(heap);
  auto streamed = stream_dump(std::move(dump), options, sink);
  return finish(std::move(streamed), std::move(heap));
}

std::string counter_name(std::uint64_t key) {
  static constexpr const char* kNames[] = {
      nullptr,
      "events",
      "missed_reentrant",
      "missed_no_buffer",
      "missed_stopped",
      "dropped_lossy",
      "backpressure_waits",
      "backpressure_wait_ns",
      "stacks",
      "truncated_stacks",
      "stack_table_full",
      "bootstrap_allocs",
      "frames",
      "bytes_written",
      "threads",
      "unwind_failed",
      "foreign_malloc",
      "toggle_taken_ns",
      "toggle_chained",
      "markers_lost",
      "writer",  // never among a dump's counters: the reader adds each writer's up by it
      "stamp_tsc",
      "tsc_read_ns",
  };
  static_assert(std::size(kNames) == static_cast<std::size_t>(format::Counter::kTscReadNs) + 1);
  if (key < std::size(kNames) && kNames[key] != nullptr) return kNames[key];
  if (const std::int64_t thread = format::recorder_thread_of(key); thread >= 0) {
    return "recorder_thread_" + std::to_string(thread) + (format::is_recorder_events_key(key) ? "_events" : "_cpu_ns");
  }
  return "unknown_" + std::to_string(key);
}

bool counter_means_loss(std::uint64_t key) {
  using format::Counter;
  for (const Counter loss :
       {Counter::kMissedReentrant, Counter::kMissedNoBuffer, Counter::kMissedStopped, Counter::kDroppedLossy,
        Counter::kTruncatedStacks, Counter::kStackTableFull, Counter::kUnwindFailed, Counter::kMarkersLost}) {
    if (key == static_cast<std::uint64_t>(loss)) return true;
  }
  return false;
}

std::vector<RecorderThread> recorder_threads(const std::map<std::uint64_t, std::uint64_t>& counters) {
  std::map<std::uint32_t, RecorderThread> by_index;
  for (const auto& [key, value] : counters) {
    const std::int64_t thread = format::recorder_thread_of(key);
    if (thread < 0) continue;
    RecorderThread& t = by_index[static_cast<std::uint32_t>(thread)];
    t.index = static_cast<std::uint32_t>(thread);
    (format::is_recorder_events_key(key) ? t.events : t.cpu_ns) = value;
  }
  std::vector<RecorderThread> out;
  for (const auto& [index, t] : by_index) out.push_back(t);
  return out;
}

}  // namespace memrec::analyzer
