// Whether a dump without an End record may still grow: its process is alive
// (memrec view --follow marks a dump whose process is gone "cut"), and which
// dumps a watched directory holds. Reads /proc and the directory only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memrec::analyzer {

enum class DumpState { kLive, kEnded, kCut };
const char* dump_state_name(DumpState state);  // "live", "ended", "cut"

// Whether process `pid` exists and is the one that started the dump at
// `start_mono_ns` (the header's CLOCK_MONOTONIC start): a process started
// after that is another one that got the pid again. A process that exec'd
// keeps its start time, so an earlier start is the same process.
bool dump_process_alive(std::uint64_t pid, std::uint64_t start_mono_ns);

// The `.dat` files directly in `dir`, sorted by name; empty if it cannot be read.
std::vector<std::string> dumps_in_directory(const std::string& dir);

}  // namespace memrec::analyzer
