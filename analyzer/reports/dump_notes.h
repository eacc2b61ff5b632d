// What a dump says about why it holds less than the program did: the
// program's malloc was not the recorder's, or the program took the toggle
// signal over (FORMAT.md, "Counters", keys 16 to 18). `memrec info`,
// `memrec report` and `memrec view` show these notes in the same words.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "load/loaded_dump.h"

namespace memrec::analyzer {

struct DumpNote {
  std::string kind;                      // "foreign_malloc", "recording_stayed_off", "toggle_taken_over", "frames_cut"
  std::string message;                   // one sentence for people, without a final period
  std::optional<std::uint64_t> time_ns;  // since the start, for the toggle; null before it or without one
};

// The notes of a loaded dump (its counters, modules, header and Recording
// records), in the order above.
std::vector<DumpNote> dump_notes(const LoadedDump& dump);

// [{"kind", "message", "time_ns"}, ...]: the schema of docs/analyzer.md.
nlohmann::json dump_notes_json(const std::vector<DumpNote>& notes);

}  // namespace memrec::analyzer
