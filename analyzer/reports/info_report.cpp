// Builds the InfoReport: replays the heap, then groups what is live at the
// end by stack and resolves each frame to a module.
#include "reports/info_report.h"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

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

}  // namespace

InfoReport build_info_report(LoadedDump dump) {
  InfoReport r;
  r.heap = replay_heap(dump.streams);
  r.leaks = group_leaks(dump, r.heap);
  if (dump.last_time_ns && *dump.last_time_ns > dump.header.start_mono_ns) {
    r.duration_ns = *dump.last_time_ns - dump.header.start_mono_ns;
  }
  // The events are replayed; the report keeps only the summary.
  std::vector<std::vector<HeapEvent>>().swap(dump.streams);
  r.dump = std::move(dump);
  return r;
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
  };
  static_assert(std::size(kNames) == static_cast<std::size_t>(format::Counter::kUnwindFailed) + 1);
  if (key < std::size(kNames) && kNames[key] != nullptr) return kNames[key];
  return "unknown_" + std::to_string(key);
}

}  // namespace memrec::analyzer
