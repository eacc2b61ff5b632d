// The `memrec` command. This file only dispatches: each command parses its own
// options in cli/<command>_cli.cpp (docs/design/analyzer_layers.md).
// Exceptions from third-party code stop here: exit 3 with one line on stderr.
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "run/environment_help.h"

using namespace memrec::analyzer;

namespace {

constexpr std::string_view kUsage =
    "usage: memrec COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] -- CMD ARGS...\n"
    "                  run a program under libmemrec.so and print where its dumps went\n"
    "  report FILE...  the heap report of memrec dumps: run time, allocations, peak,\n"
    "                  leaks, temporaries and the top call sites, per process\n"
    "  view FILE...    serve a browser UI of memrec dumps on http://127.0.0.1:9999/\n"
    "  export FILE... --format F\n"
    "                  write the heap profile for other tools: pprof, collapsed, svg,\n"
    "                  massif, heaptrack, json\n"
    "  diff BASE NEW   compare two dumps, or two --from/--to ranges of one, call site\n"
    "                  by call site; --fail-if for CI\n"
    "  info FILE...    summarize memrec dumps (.dat): header, counts, threads, modules,\n"
    "                  live heap at the end, peak, leaks by stack\n"
    "  ctl PID start|stop|status|mark LABEL\n"
    "                  control a running process's recording through its control socket\n"
    "  mark PID LABEL  set a marker in a running process's dump (memrec ctl PID mark LABEL)\n"
    "  help [COMMAND | env]\n"
    "                  this text, a command's options, or the MEMREC_* environment\n"
    "                  variables that libmemrec.so reads\n"
    "\n"
    "Run 'memrec COMMAND --help' for a command's options.\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input (missing, corrupt or not a dump), 3 internal error.\n";

int dispatch_command(const std::string& command, const std::vector<std::string>& rest) {
  if (command == "info") return info_main(rest);
  if (command == "report") return report_main(rest);
  if (command == "run") return run_main(rest);
  if (command == "export") return export_main(rest);
  if (command == "diff") return diff_main(rest);
  if (command == "view") return view_main(rest);
  if (command == "ctl") return ctl_main(rest);
  if (command == "mark") return mark_main(rest);
  return usage_error("unknown command '" + command + "'");
}

int dispatch(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || (command == "help" && args.size() == 1)) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "help") {
    if (args.size() > 2) return usage_error("help: one topic at a time (a command or env)");
    if (args[1] == "env") {
      print_environment_help(std::cout);
      return kExitOk;
    }
    if (args[1] == "help") return usage_error("help: 'memrec help' lists the commands");
    return dispatch_command(args[1], {"--help"});
  }
  if (command == "--version") {
    std::cout << "memrec " MEMREC_VERSION "\n";
    return kExitOk;
  }
  return dispatch_command(command, std::vector<std::string>(args.begin() + 1, args.end()));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return dispatch(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "memrec: internal error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "memrec: internal error: unknown exception\n";
  }
  return kExitInternal;
}
