// `memrec info` for people: a short summary per file. Exact numbers live in
// --json; here sizes and times are rounded to be read at a glance.
#include <ctime>
#include <iterator>
#include <string_view>

#include <fmt/format.h>

#include "reports/dump_notes.h"
#include "reports/info_report.h"

namespace memrec::analyzer {
namespace {

// "1 frame", "2 frames".
std::string count_of(std::uint64_t n, std::string_view noun) {
  return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

std::string human_bytes(std::uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (v >= 1024 && unit + 1 < std::size(kUnits)) {
    v /= 1024;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", bytes) : fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string human_duration(std::uint64_t ns) {
  if (ns < 1'000) return fmt::format("{} ns", ns);
  if (ns < 1'000'000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  if (ns < 1'000'000'000) return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9);
}

// A monotonic event time as an offset from the start of the recording.
std::string since_start(const LoadedDump& d, std::uint64_t t) {
  if (t < d.header.start_mono_ns) return "before the start";
  return "+" + human_duration(t - d.header.start_mono_ns);
}

// "at +1.2 s", or "before the start" (a clock read before the header's).
std::string when(const LoadedDump& d, std::uint64_t t) {
  return t < d.header.start_mono_ns ? "before the start" : "at " + since_start(d, t);
}

std::string wall_time(std::uint64_t ns) {
  const auto secs = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  if (gmtime_r(&secs, &tm) == nullptr) return fmt::format("{} ns since the epoch", ns);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

void write_header(std::string& out, const InfoReport& r) {
  const LoadedDump& d = r.dump;
  const reader::FileHeader& h = d.header;
  fmt::format_to(std::back_inserter(out), "{}: memrec dump v{}, {}, {}\n", d.path, h.version,
                 human_bytes(d.facts.file_bytes), count_of(d.facts.frames, "frame"));
  std::string cmdline;
  for (const std::string& arg : h.cmdline) cmdline += (cmdline.empty() ? "" : " ") + arg;
  fmt::format_to(std::back_inserter(out), "  process   pid {} (parent {}): {}\n", h.pid, h.ppid,
                 cmdline.empty() ? h.exe_path : cmdline);
  fmt::format_to(std::back_inserter(out), "  started   {}, ran {}\n", wall_time(h.start_wall_ns),
                 human_duration(r.duration_ns));
  if (d.facts.truncated_at) {
    fmt::format_to(std::back_inserter(out), "  end       cut at offset {}: the last complete frame ends there\n",
                   *d.facts.truncated_at);
  } else if (d.facts.ended_by_exec()) {
    fmt::format_to(std::back_inserter(out), "  end       exec of {}: the process went on as that program\n",
                   *d.facts.exec_path);
  } else {
    out += d.facts.clean_end ? "  end       clean\n"
                             : "  end       no End record: the process stopped without a clean exit\n";
  }
  for (const DumpNote& n : dump_notes(d)) fmt::format_to(std::back_inserter(out), "  note      {}\n", n.message);
  if (!h.options.empty()) {
    out += "  options  ";
    for (const auto& [key, value] : h.options) fmt::format_to(std::back_inserter(out), " {}={}", key, value);
    out += "\n";
  }
}

void write_counts(std::string& out, const InfoReport& r) {
  const RecordCounts& c = r.dump.counts;
  fmt::format_to(std::back_inserter(out),
                 "  events    {} allocs, {} frees, {} reallocs, {} mmaps, {} munmaps, {} mremaps\n", c.alloc, c.free,
                 c.realloc, c.mmap, c.munmap, c.mremap);
  std::string by_fn;
  for (std::uint8_t fn = 0; fn < format::kAllocFnCount; ++fn) {
    if (c.by_function[fn] == 0) continue;
    by_fn += fmt::format("{}{} {}", by_fn.empty() ? "" : ", ", format::alloc_fn_name(static_cast<format::AllocFn>(fn)),
                         c.by_function[fn]);
  }
  if (!by_fn.empty()) fmt::format_to(std::back_inserter(out), "  by call   {}\n", by_fn);
  const HeapReplay& h = r.heap;
  fmt::format_to(std::back_inserter(out), "  heap      {} live in {} at the end; ", human_bytes(h.live_bytes),
                 count_of(h.live.size(), "block"));
  // A heap that never grew has no peak, nor a time for one.
  if (h.peak_bytes == 0) {
    out += "it never grew";
  } else {
    fmt::format_to(std::back_inserter(out), "peak {} {}", human_bytes(h.peak_bytes), when(r.dump, h.peak_time_ns));
  }
  if (h.unmatched_frees > 0) fmt::format_to(std::back_inserter(out), "; {} frees of unknown blocks", h.unmatched_frees);
  if (h.replaced_blocks > 0) {
    fmt::format_to(std::back_inserter(out), "; {} over a live block (its free was not recorded)",
                   count_of(h.replaced_blocks, "allocation"));
  }
  out += "\n";
  fmt::format_to(std::back_inserter(out), "  mmap      {} live in {} at the end\n", human_bytes(h.mmap.live_bytes()),
                 count_of(h.mmap.live_count(), "anonymous mapping"));
  if (c.rss_samples > 0) {
    fmt::format_to(std::back_inserter(out), "  rss       max {} over {}\n", human_bytes(r.dump.rss_max_bytes),
                   count_of(c.rss_samples, "sample"));
  }
  fmt::format_to(std::back_inserter(out), "  stacks    {} distinct\n", c.stacks);
  for (const reader::RecordingRecord& t : r.dump.recording) {
    fmt::format_to(std::back_inserter(out), "  recording {} {} ({})\n", t.on ? "resumed" : "paused",
                   when(r.dump, t.time_ns), format::source_name(t.source));
  }
  for (const reader::MarkerRecord& m : r.dump.markers) {
    fmt::format_to(std::back_inserter(out), "  marker    '{}' {} ({})\n", m.label, when(r.dump, m.time_ns),
                   format::source_name(m.source));
  }
}

void write_threads_and_modules(std::string& out, const InfoReport& r) {
  const LoadedDump& d = r.dump;
  fmt::format_to(std::back_inserter(out), "  threads   {}\n", d.threads.size());
  for (const ThreadInfo& t : d.threads) {
    fmt::format_to(std::back_inserter(out), "    {:>8} {:<16}", t.tid, t.name.empty() ? "?" : t.name);
    if (t.start_ns) fmt::format_to(std::back_inserter(out), " started {}", since_start(d, *t.start_ns));
    if (t.exit_ns) fmt::format_to(std::back_inserter(out), " exited {}", since_start(d, *t.exit_ns));
    out += "\n";
  }
  fmt::format_to(std::back_inserter(out), "  modules   {}\n", d.modules.size());
  for (const ModuleInfo& m : d.modules) {
    fmt::format_to(std::back_inserter(out), "    {:>4} {} (bias {:#x}, generation {}", m.id.value, m.path, m.bias,
                   m.load_gen);
    if (m.unload_gen) fmt::format_to(std::back_inserter(out), ", unloaded at {}", *m.unload_gen);
    out += ")\n";
  }
  if (!d.facts.counters.empty()) {
    out += "  counters ";
    for (const auto& [key, value] : d.facts.counters)
      fmt::format_to(std::back_inserter(out), " {}={}", counter_name(key), value);
    out += "\n";
  }
  // What recording cost the recorder's own threads (the hooks' part is on
  // the program's threads): per thread, and per event it coded.
  for (const RecorderThread& t : recorder_threads(d.facts.counters)) {
    fmt::format_to(std::back_inserter(out), "  recorder  thread {}: {:.3f} s CPU, {} events", t.index,
                   static_cast<double>(t.cpu_ns) / 1e9, t.events);
    if (t.events != 0) fmt::format_to(std::back_inserter(out), ", {} ns/event", t.cpu_ns / t.events);
    out += "\n";
  }
}

void write_leaks(std::string& out, const InfoReport& r, std::size_t top) {
  if (r.leaks.empty()) {
    out += "  leaks     none: every recorded heap block was freed\n";
    return;
  }
  fmt::format_to(std::back_inserter(out), "  leaks     {} in {} from {}{}\n", human_bytes(r.heap.live_bytes),
                 count_of(r.heap.live.size(), "block"), count_of(r.leaks.size(), "stack"),
                 r.leaks.size() > top ? fmt::format(", largest {}", top) : "");
  for (std::size_t i = 0; i < r.leaks.size() && i < top; ++i) {
    const LeakGroup& g = r.leaks[i];
    fmt::format_to(std::back_inserter(out), "    #{} {} in {}, stack {}{}\n", i + 1, human_bytes(g.bytes),
                   count_of(g.count, "block"), g.stack.value, g.truncated ? " (cut at max depth)" : "");
    for (const LeakFrame& f : g.frames) {
      if (f.module) {
        const ModuleInfo& m = r.dump.modules[*f.module];
        fmt::format_to(std::back_inserter(out), "        {:#018x} {}+{:#x}\n", f.ip, m.path, f.ip - m.bias);
      } else {
        fmt::format_to(std::back_inserter(out), "        {:#018x} ?\n", f.ip);
      }
    }
  }
}

}  // namespace

std::string info_text(const InfoReport& report, std::size_t top_leaks) {
  std::string out;
  write_header(out, report);
  write_counts(out, report);
  write_threads_and_modules(out, report);
  write_leaks(out, report, top_leaks);
  return out;
}

}  // namespace memrec::analyzer
