// Turns the recorder's takeover counters into sentences (see dump_notes.h).
#include "reports/dump_notes.h"

#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "model/module_map.h"

namespace memrec::analyzer {
namespace {

std::uint64_t counter_value(const LoadedDump& d, format::Counter key) {
  const auto it = d.facts.counters.find(static_cast<std::uint64_t>(key));
  return it == d.facts.counters.end() ? 0 : it->second;
}

std::string_view base_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::uint64_t allocations(const LoadedDump& d) { return d.counts.alloc + d.counts.realloc; }

// Whose malloc the program called: a library's base name, its executable, or
// an address no module of the dump holds (modules present at start are
// generation 1).
std::string malloc_owner(const LoadedDump& d, std::uint64_t address) {
  const ModuleInfo* m = ModuleMap(d.modules).find(address + 1, 1);
  if (m == nullptr) return fmt::format("the code at {:#x}", address);
  if (m->path == d.header.exe_path) return "its own (in its executable)";
  return fmt::format("{}'s", base_name(m->path));
}

DumpNote foreign_malloc_note(const LoadedDump& d, std::uint64_t address) {
  const std::string owner = malloc_owner(d, address);
  const bool in_exe = owner.starts_with("its own");
  // A preloaded shim may still pass some calls on to ours: say what was kept.
  const std::string what =
      allocations(d) == 0 ? "nothing was recorded" : "only the allocations that reached memrec's malloc were recorded";
  return {"foreign_malloc",
          fmt::format("the program's malloc is {}, not memrec's: {}{}", owner, what,
                      in_exe ? "" : "; put libmemrec.so first in LD_PRELOAD"),
          std::nullopt};
}

// The header's `signal` option, by name ("SIGUSR1"); a real-time signal or
// an old dump without the option by number.
std::string signal_name(const LoadedDump& d) {
  for (const auto& [key, value] : d.header.options) {
    if (key != "signal") continue;
    char* end = nullptr;
    const long sig = std::strtol(value.c_str(), &end, 10);
    if (end == value.c_str() || *end != '\0') return value;
    if (const char* abbrev = sigabbrev_np(static_cast<int>(sig))) return fmt::format("SIG{}", abbrev);
    return fmt::format("signal {}", sig);
  }
  return "SIGUSR1";
}

std::optional<DumpNote> toggle_note(const LoadedDump& d, std::uint64_t taken_ns) {
  // The program's handler passed the signal on to ours: the toggle worked.
  if (counter_value(d, format::Counter::kToggleChained) != 0) return std::nullopt;
  const std::string sig = signal_name(d);
  const std::uint64_t start = d.header.start_mono_ns;
  const std::optional<std::uint64_t> at = taken_ns >= start ? std::optional(taken_ns - start) : std::nullopt;
  const bool paused_at_end = !d.recording.empty() && !d.recording.back().on;
  if (paused_at_end && allocations(d) == 0) {
    return DumpNote{"recording_stayed_off",
                    fmt::format("recording stayed off: the program took over {}; use MEMREC_SIGNAL to pick a "
                                "signal it leaves alone",
                                sig),
                    at};
  }
  const std::string when =
      at ? fmt::format("at {:.3f} s", static_cast<double>(*at) / 1e9) : std::string("before this process started");
  return DumpNote{"toggle_taken_over",
                  fmt::format("the program took over {} {}: the toggle no longer worked after that", sig, when), at};
}

}  // namespace

std::vector<DumpNote> dump_notes(const LoadedDump& d) {
  std::vector<DumpNote> notes;
  if (const std::uint64_t address = counter_value(d, format::Counter::kForeignMalloc)) {
    notes.push_back(foreign_malloc_note(d, address));
  }
  if (const std::uint64_t taken = counter_value(d, format::Counter::kToggleTakenNs)) {
    if (auto note = toggle_note(d, taken)) notes.push_back(std::move(*note));
  }
  // A writer stopped mid-frame while others went on (FORMAT.md, "Frames of
  // several writers"): the frames after the gap were read, the gap's were not.
  if (!d.facts.cut.empty()) {
    std::uint64_t bytes = 0;
    for (const reader::CutFrame& c : d.facts.cut) bytes += c.bytes;
    notes.push_back(
        {"frames_cut",
         fmt::format("{} stretch{} of {} bytes from offset {} never fully written (a writer was stopped "
                     "mid-frame): their events are lost, the frames after them were read",
                     d.facts.cut.size(), d.facts.cut.size() == 1 ? "" : "es", bytes, d.facts.cut.front().offset),
         std::nullopt});
  }
  return notes;
}

nlohmann::json dump_notes_json(const std::vector<DumpNote>& notes) {
  nlohmann::json out = nlohmann::json::array();
  for (const DumpNote& n : notes) {
    out.push_back({{"kind", n.kind},
                   {"message", n.message},
                   {"time_ns", n.time_ns ? nlohmann::json(*n.time_ns) : nlohmann::json(nullptr)}});
  }
  return out;
}

}  // namespace memrec::analyzer
