// `memrec ctl PID start|stop|status|mark LABEL`: one command to a recorded
// process's control socket, one line back. `memrec mark PID LABEL` is its
// shorthand. main() parses the arguments; this file talks to the socket.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace memrec::analyzer {

struct CtlOptions {
  std::string pid;                 // as given: checked here
  std::string command;             // start, stop, status or mark
  std::vector<std::string> label;  // mark's words, joined with spaces
};

// The command line sent to the socket, or nullopt after printing a usage
// error to `err` (kExitUsage).
std::optional<std::string> ctl_request(const CtlOptions& options, std::ostream& err);

// Sends the command and prints the reply on `out`: exit 0. A process that is
// gone, stopped, another user's or without a control socket, a reply that is
// an error line, or none in time: a sentence on `err` and kExitBadInput.
int run_ctl(const CtlOptions& options, std::ostream& out, std::ostream& err);

}  // namespace memrec::analyzer
