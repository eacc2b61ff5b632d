// `memrec info`: a summary of one dump — header, counts, threads, modules,
// counters, the live heap at the end, its peak, and leaks grouped by stack.
// Built once, streaming the dump's events through a heap replay, then written
// as text or as JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/dump_loader.h"
#include "load/loaded_dump.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/result.h"
#include "model/heap_replay.h"

namespace memrec::analyzer {

struct LeakFrame {
  std::uint64_t ip = 0;
  std::optional<std::size_t> module;  // index into LoadedDump::modules
};

// Heap blocks live at the end that share an allocation stack.
struct LeakGroup {
  StackId stack;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  bool truncated = false;
  std::vector<LeakFrame> frames;  // innermost first; empty for stack 0 or an undefined id
};

struct InfoReport {
  LoadedDump dump;
  HeapReplay heap;
  std::vector<LeakGroup> leaks;   // by bytes, largest first
  std::uint64_t duration_ns = 0;  // last record time - start_mono_ns
};

// Streams the dump's events through a heap replay (load/ordered_events.h):
// memory for the blocks live at once and the frames in flight, not for every
// event, which load_dump() kept (churn's 24 MB dump took 660 MB). A frame
// that does not decode fails the report, naming it.
Result<InfoReport> build_info_report(const std::string& path, const LoadOptions& options);
// The same for a dump already open (tests: a dump in memory).
Result<InfoReport> build_info_report(reader::Dump dump, const LoadOptions& options);

// The JSON object of one file (the schema the integration tests rely on).
nlohmann::json info_json(const InfoReport& report);
// The human-readable summary; lists the `top_leaks` largest leak groups.
std::string info_text(const InfoReport& report, std::size_t top_leaks);

// The name of a counter key in JSON: "events", ..., "recorder_thread_<i>_cpu_ns"
// or "recorder_thread_<i>_events", or "unknown_<key>".
std::string counter_name(std::uint64_t key);
// Whether a counter counts what the dump lacks: allocations passed through or
// dropped unrecorded, stacks cut short or lost. memrec view's Recorder card
// lists those that are not zero (docs/api.md, /summary's loss_counters).
bool counter_means_loss(std::uint64_t key);

// One of the recorder's own threads (FORMAT.md, "Counters"), as the dump's
// last counters give it: 0 is the writer.
struct RecorderThread {
  std::uint32_t index = 0;
  std::uint64_t cpu_ns = 0;
  std::uint64_t events = 0;
};
// The recorder threads the counters name, by index; none when the process
// never started one.
std::vector<RecorderThread> recorder_threads(const std::map<std::uint64_t, std::uint64_t>& counters);

}  // namespace memrec::analyzer
