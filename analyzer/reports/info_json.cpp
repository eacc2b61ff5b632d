// `memrec info --json`: one object per file. Integration tests depend on
// these names; numbers (addresses too) are JSON integers, absent values null.
#include <fmt/format.h>

#include "reports/dump_notes.h"
#include "reports/info_report.h"

namespace memrec::analyzer {
namespace {

using nlohmann::json;

json optional_number(const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); }

std::string hex(const std::vector<std::byte>& bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

json header_json(const reader::FileHeader& h) {
  json options = json::object();
  for (const auto& [key, value] : h.options) options[key] = value;
  return {{"pid", h.pid},
          {"ppid", h.ppid},
          {"exe", h.exe_path},
          {"cmdline", h.cmdline},
          {"start_wall_ns", h.start_wall_ns},
          {"start_mono_ns", h.start_mono_ns},
          {"page_size", h.page_size},
          {"options", options}};
}

json counts_json(const LoadedDump& d) {
  const RecordCounts& c = d.counts;
  json by_function = json::object();
  for (std::uint8_t fn = 0; fn < format::kAllocFnCount; ++fn) {
    by_function[std::string(format::alloc_fn_name(static_cast<format::AllocFn>(fn)))] = c.by_function[fn];
  }
  return {{"alloc", c.alloc},
          {"free", c.free},
          {"realloc", c.realloc},
          {"mmap", c.mmap},
          {"munmap", c.munmap},
          {"mremap", c.mremap},
          {"stacks", c.stacks},
          {"modules", c.modules},
          {"threads", d.threads.size()},
          {"rss_samples", c.rss_samples},
          {"recording_toggles", c.recording_toggles},
          {"alloc_by_function", by_function}};
}

json counters_json(const std::map<std::uint64_t, std::uint64_t>& counters) {
  json out = json::object();
  for (const auto& [key, value] : counters) out[counter_name(key)] = value;
  return out;
}

json recorder_threads_json(const std::map<std::uint64_t, std::uint64_t>& counters) {
  json out = json::array();
  for (const RecorderThread& t : recorder_threads(counters)) {
    out.push_back({{"thread", t.index}, {"cpu_ns", t.cpu_ns}, {"events", t.events}});
  }
  return out;
}

json threads_json(const std::vector<ThreadInfo>& threads) {
  json out = json::array();
  for (const ThreadInfo& t : threads) {
    out.push_back({{"tid", t.tid},
                   {"name", t.name},
                   {"start_ns", optional_number(t.start_ns)},
                   {"exit_ns", optional_number(t.exit_ns)}});
  }
  return out;
}

json modules_json(const std::vector<ModuleInfo>& modules) {
  json out = json::array();
  for (const ModuleInfo& m : modules) {
    out.push_back({{"id", m.id.value},
                   {"path", m.path},
                   {"bias", m.bias},
                   {"build_id", hex(m.build_id)},
                   {"load_gen", m.load_gen},
                   {"unload_gen", optional_number(m.unload_gen)}});
  }
  return out;
}

json leaks_json(const InfoReport& r) {
  json out = json::array();
  for (const LeakGroup& g : r.leaks) {
    json frames = json::array();
    for (const LeakFrame& f : g.frames) {
      if (f.module) {
        const ModuleInfo& m = r.dump.modules[*f.module];
        frames.push_back({{"ip", f.ip}, {"module", m.path}, {"offset", f.ip - m.bias}});
      } else {
        frames.push_back({{"ip", f.ip}, {"module", nullptr}, {"offset", nullptr}});
      }
    }
    out.push_back({{"stack", g.stack.value},
                   {"count", g.count},
                   {"bytes", g.bytes},
                   {"truncated", g.truncated},
                   {"frames", frames}});
  }
  return out;
}

}  // namespace

json info_json(const InfoReport& r) {
  const LoadedDump& d = r.dump;
  json recording = json::array();
  for (const reader::RecordingRecord& t : d.recording) {
    recording.push_back({{"time_ns", t.time_ns}, {"on", t.on}, {"source", format::source_name(t.source)}});
  }
  json markers = json::array();
  for (const reader::MarkerRecord& m : d.markers) {
    markers.push_back({{"time_ns", m.time_ns}, {"label", m.label}, {"source", format::source_name(m.source)}});
  }
  return {
      {"file", d.path},
      {"format_version", d.header.version},
      {"file_bytes", d.facts.file_bytes},
      {"frames", d.facts.frames},
      {"clean_end", d.facts.clean_end},
      {"ended_by_exec", d.facts.ended_by_exec()},
      {"exec_path", d.facts.ended_by_exec() ? json(*d.facts.exec_path) : json(nullptr)},
      {"truncated_at", optional_number(d.facts.truncated_at)},
      {"notes", dump_notes_json(dump_notes(d))},
      {"header", header_json(d.header)},
      {"duration_ns", r.duration_ns},
      {"counts", counts_json(d)},
      {"counters", counters_json(d.facts.counters)},
      {"recorder_threads", recorder_threads_json(d.facts.counters)},
      {"threads", threads_json(d.threads)},
      {"modules", modules_json(d.modules)},
      {"recording", recording},
      {"markers", markers},
      {"heap",
       {{"live_bytes", r.heap.live_bytes},
        {"live_count", r.heap.live.size()},
        {"peak_bytes", r.heap.peak_bytes},
        {"peak_time_ns", r.heap.peak_time_ns},
        {"unmatched_frees", r.heap.unmatched_frees}}},
      {"mmap", {{"live_bytes", r.heap.mmap.live_bytes()}, {"live_count", r.heap.mmap.live_count()}}},
      {"rss", {{"samples", d.counts.rss_samples}, {"max_bytes", d.rss_max_bytes}}},
      {"leaks", leaks_json(r)},
  };
}

}  // namespace memrec::analyzer
