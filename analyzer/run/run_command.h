// `memrec run [--output T] [--start-disabled] [--only GLOB] [--preload P] -- CMD ARGS...`:
// runs a program under libmemrec.so and says where its dumps went. main()
// parses the arguments; this file finds the preload, starts and waits.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "memrec/preload/environment.h"

namespace memrec::analyzer {

struct RunOptions {
  std::vector<std::string> command;                      // CMD ARGS...
  std::string output{preload::kEnvOutput.default_text};  // the preload's own default
  bool start_disabled = false;
  std::optional<std::string> only;  // MEMREC_ONLY: a glob of the program names to record
  std::optional<std::string> preload;
};

// Where libmemrec.so is for the `memrec` binary at `self_exe`: next to it in
// a build tree (<builddir>/analyzer/memrec -> <builddir>/preload/libmemrec.so)
// or where meson installs it (MEMREC_PRELOAD_FROM_BINDIR, relative to bindir).
// Candidates in order; the caller takes the first that exists.
std::vector<std::string> preload_candidates(const std::string& self_exe);

// Runs the command and waits for it. Returns its exit code, 128 + N if a
// signal N killed it, 127 if it could not be started, or kExitUsage /
// kExitBadInput when memrec itself cannot start it (no preload, bad template).
// Ends with one line on `err`: how many dumps were created under the
// template, and the main one (main_dump()).
int run_command(const RunOptions& options, std::ostream& err);

// A dump's process, as its header says; for main_dump().
struct DumpProcess {
  std::string path;
  std::uint64_t pid = 0;
  std::uint64_t start_mono_ns = 0;
};

// The dump a user of `memrec run` wants first: the root process's (`root_pid`),
// the last program it exec'd when it wrote several (a shim that execs the
// real program), else the one started first (a launcher that forks it).
// Empty when `dumps` is.
std::string main_dump(const std::vector<DumpProcess>& dumps, std::uint64_t root_pid);

}  // namespace memrec::analyzer
