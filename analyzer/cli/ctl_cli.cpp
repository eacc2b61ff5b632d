// `memrec ctl` and its shorthand `memrec mark`: options and --help; the work is ctl/ctl_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "ctl/ctl_command.h"

namespace memrec::analyzer {

namespace {

constexpr std::string_view kCtlHelp =
    "Talks to the recorder inside a running process (started under libmemrec.so, e.g. by\n"
    "memrec run) through its control socket, without signals: the program may own SIGUSR1.\n"
    "  start, stop     switch the recording of allocations on or off (frees are always\n"
    "                  recorded); the dump notes each switch as from 'ctl'\n"
    "  status          recording or paused, the pid and the dump's path\n"
    "  mark LABEL      a named instant in the dump (at most 255 bytes): ranges accept it\n"
    "                  as mark:LABEL (memrec report --from mark:LABEL)\n"
    "Only the process's owner (or root) may control it. Prints the recorder's one-line\n"
    "answer. Exit codes: 0 done, 1 usage, 2 the process is gone, stopped, another user's,\n"
    "has no control socket (not recorded, or fewer than 32 allocations on one thread so\n"
    "far), or refused the command.\n";

// `ctl` and its shorthand `mark`: PID, the command (given for `mark`), its words.
int ctl_like_main(const std::vector<std::string>& args, std::string_view name, std::optional<std::string> command) {
  CtlOptions options;
  po::options_description visible("Options");
  visible.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("pid", po::value(&options.pid), "pid");
  if (!command) hidden.add_options()("command", po::value(&options.command), "command");
  hidden.add_options()("label", po::value(&options.label), "label");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("pid", 1);
  if (!command) positional.add("command", 1);
  positional.add("label", -1);
  po::variables_map vm;
  // A label's words may look like options ("mark PID -- -x" is not needed):
  // only a leading --help or -h is memrec's.
  std::vector<std::string> own = args;
  const bool help = !args.empty() && (args[0] == "--help" || args[0] == "-h");
  if (!help) own.insert(own.begin(), "--");
  if (!parse(own, all, positional, vm, name)) return kExitUsage;
  if (help) {
    std::cout << (command ? "usage: memrec mark PID LABEL\n\nThe shorthand of memrec ctl PID mark LABEL.\n"
                          : "usage: memrec ctl PID start|stop|status|mark LABEL\n\n")
              << kCtlHelp << "\n"
              << visible;
    return kExitOk;
  }
  if (command) options.command = *command;
  if (options.pid.empty()) return usage_error(std::string(name) + ": no PID given");
  if (options.command.empty())
    return usage_error(std::string(name) + ": no command given (start, stop, status or mark LABEL)");
  return run_ctl(options, std::cout, std::cerr);
}

}  // namespace

int ctl_main(const std::vector<std::string>& args) { return ctl_like_main(args, "ctl", std::nullopt); }

int mark_main(const std::vector<std::string>& args) { return ctl_like_main(args, "mark", "mark"); }

}  // namespace memrec::analyzer
