// `memrec run`: its options and --help; the work is run/run_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "run/run_command.h"

namespace memrec::analyzer {

int run_main(const std::vector<std::string>& args) {
  RunOptions options;
  std::string preload;
  std::string only;
  po::options_description visible("Options");
  visible.add_options()             //
      ("help,h", "show this help")  //
      ("output,o", po::value(&options.output)->default_value(options.output),
       "dump path template: %p pid, %e executable name, %t start time, %n counter")                               //
      ("start-disabled", po::bool_switch(&options.start_disabled), "start with recording off (SIGUSR1 toggles)")  //
      ("only", po::value(&only),
       "record only the programs whose name matches this glob (MEMREC_ONLY); the others pass through")  //
      ("preload", po::value(&preload), "the libmemrec.so to use (default: the one next to memrec)");
  po::options_description hidden;
  hidden.add_options()("command", po::value(&options.command), "command");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("command", -1);
  po::variables_map vm;
  // Everything from the program's name on is the program's, even what looks
  // like an option: memrec's own options end at "--" or the first positional.
  std::vector<std::string> own;
  std::vector<std::string> command;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--" || !a.starts_with("-")) {
      command.assign(args.begin() + static_cast<std::ptrdiff_t>(a == "--" ? i + 1 : i), args.end());
      break;
    }
    own.push_back(a);
    const bool takes_value = a == "--output" || a == "-o" || a == "--preload" || a == "--only";
    if (takes_value && i + 1 < args.size()) own.push_back(args[++i]);
  }
  if (!parse(own, all, positional, vm, "run")) return kExitUsage;
  if (vm.count("help") != 0) {
    std::cout << "usage: memrec run [--output TEMPLATE] [--start-disabled] [--only GLOB] [--preload PATH] -- CMD "
                 "[ARGS...]\n\n"
                 "Runs CMD with libmemrec.so preloaded, so it and every process it starts write a\n"
                 "dump (with --only, those whose name matches GLOB); ends with one line on stderr:\n"
                 "how many dumps were written and the main one (CMD's own, or the last program it\n"
                 "exec'd). Exits with CMD's exit code (128 + N if signal N killed it; 127 if CMD\n"
                 "could not be started).\n\n"
              << visible;
    return kExitOk;
  }
  options.command.insert(options.command.end(), command.begin(), command.end());
  if (options.command.empty()) return usage_error("run: no command given (memrec run -- CMD ARGS...)");
  if (vm.count("preload") != 0) options.preload = preload;
  if (vm.count("only") != 0) options.only = only;
  return run_command(options, std::cerr);
}

}  // namespace memrec::analyzer
