// Where a module's debug file may lie, and which candidate to take. The
// candidates are pure path arithmetic (testable without files); the pick opens
// each in order and keeps the first whose build-id is the expected one. The
// policy for missing and rebuilt files lives in module_source.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace memrec::analyzer {

// The system's debug root: Debian's -dbgsym packages install under it.
inline constexpr const char* kSystemDebugDir = "/usr/lib/debug";

// <dir>/.build-id/xx/yyyy.debug for each --debug-dir, then /usr/lib/debug;
// for a --debug-dir also <dir>/xx/yyyy.debug (a .build-id folder passed as is).
std::vector<std::string> build_id_candidates(std::span<const std::uint8_t> build_id,
                                             std::span<const std::string> debug_dirs);

// GDB's .gnu_debuglink search for /a/b/libx.so linking `link`: /a/b/link,
// /a/b/.debug/link, then <dir>/a/b/link and <dir>/link for each --debug-dir,
// then /usr/lib/debug/a/b/link.
std::vector<std::string> debuglink_candidates(const std::string& module_path, const std::string& link,
                                              std::span<const std::string> debug_dirs);

// <dir>/libx.so and <dir>/libx.so.debug for each --debug-dir: unstripped
// copies or debug files collected from the machine that ran the program.
std::vector<std::string> name_candidates(const std::string& module_path, std::span<const std::string> debug_dirs);

struct DebugLookup {
  std::string module_path;
  std::vector<std::uint8_t> want_build_id;  // a candidate must have this build-id; empty accepts any
  std::optional<std::string> debuglink;     // of the module's file, when that file is the recorded one
};

struct DebugFiles {
  std::optional<std::string> dwarf;    // the first matching candidate with DWARF
  std::optional<std::string> symbols;  // else the first matching file found by name (a stripped copy)
};

DebugFiles find_debug_files(const DebugLookup& lookup, std::span<const std::string> debug_dirs);

}  // namespace memrec::analyzer
