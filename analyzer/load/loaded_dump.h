// What `load_dump` gives the model and report layers: one file's header,
// facts, metadata (threads, modules, stacks) and its heap events as one
// sequence per thread, each in that thread's own order.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "load/heap_event.h"
#include "load/stack_table.h"
#include "memrec/format/records.h"
#include "memrec/reader/dump_reader.h"

namespace memrec::analyzer {

struct RecordCounts {
  std::uint64_t alloc = 0;
  std::uint64_t free = 0;
  std::uint64_t realloc = 0;
  std::uint64_t mmap = 0;
  std::uint64_t munmap = 0;
  std::uint64_t mremap = 0;
  std::uint64_t stacks = 0;
  std::uint64_t modules = 0;
  std::uint64_t rss_samples = 0;
  std::uint64_t recording_toggles = 0;
  // Alloc records by their function, plus Realloc records under theirs.
  std::array<std::uint64_t, format::kAllocFnCount> by_function{};

  RecordCounts& operator+=(const RecordCounts& o);
};

struct ThreadInfo {
  std::uint64_t tid = 0;
  std::string name;
  std::optional<std::uint64_t> start_ns;
  std::optional<std::uint64_t> exit_ns;
};

struct ModuleInfo {
  ModuleId id;
  std::string path;
  std::uint64_t bias = 0;
  std::vector<std::byte> build_id;
  std::vector<format::Segment> segments;
  std::uint64_t load_gen = 0;
  std::optional<std::uint64_t> unload_gen;
};

struct LoadedDump {
  std::string path;
  reader::FileHeader header;
  reader::DumpFacts facts;
  RecordCounts counts;
  std::vector<ThreadInfo> threads;  // in order of first appearance
  std::vector<ModuleInfo> modules;  // in order of definition
  StackTable stacks;
  std::vector<reader::RecordingRecord> recording;
  std::vector<reader::MarkerRecord> markers;  // by time (threads' markers interleave across frames)
  std::uint64_t rss_max_bytes = 0;
  std::vector<reader::RssRecord> rss;         // every sample, in file order (10 a second by default)
  std::optional<std::uint64_t> last_time_ns;  // the latest time of any record
  // Heap and anonymous-memory events, one sequence per thread; empty when
  // the events were streamed to a callback instead (load_dump_streaming).
  std::vector<std::vector<HeapEvent>> streams;
};

}  // namespace memrec::analyzer
