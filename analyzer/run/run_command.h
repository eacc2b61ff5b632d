// `memrec run [--output T] [--start-disabled] [--preload P] -- CMD ARGS...`:
// runs a program under libmemrec.so and says where its dumps went. main()
// parses the arguments; this file finds the preload, starts and waits.
#pragma once

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
// Lists the dumps created under the template on `err`.
int run_command(const RunOptions& options, std::ostream& err);

}  // namespace memrec::analyzer
