// The `memrec` command. This file only parses arguments (Boost.Program_options)
// and dispatches to a subcommand; the work lives in load/, model/ and reports/.
// Exceptions from third-party code stop here: exit 3 with one line on stderr.
#include <exception>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "exit_codes.h"
#include "reports/info_command.h"

namespace po = boost::program_options;
using namespace memrec::analyzer;

namespace {

constexpr std::string_view kUsage =
    "usage: memrec COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Commands:\n"
    "  info FILE...    summarize memrec dumps (.dat): header, counts, threads, modules,\n"
    "                  live heap at the end, peak, leaks by stack\n"
    "\n"
    "Run 'memrec COMMAND --help' for a command's options.\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input (missing, corrupt or not a dump), 3 internal error.\n";

int usage_error(const std::string& message) {
  std::cerr << "memrec: " << message << "\nRun 'memrec --help' for usage.\n";
  return kExitUsage;
}

int info_main(const std::vector<std::string>& args) {
  InfoOptions options;
  po::options_description visible("Options");
  visible.add_options()                                                                                        //
      ("help,h", "show this help")                                                                             //
      ("json", po::bool_switch(&options.json), "print JSON: one object per file, an array for several files")  //
      ("top", po::value(&options.top_leaks)->default_value(10), "leak groups to list in the text output")      //
      ("threads", po::value(&options.threads)->default_value(0), "decoding threads (0: one per core, at most 8)");
  po::options_description hidden;
  hidden.add_options()("file", po::value(&options.files), "dump file");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("file", -1);

  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(std::string("info: ") + e.what());
  }
  if (vm.count("help") != 0) {
    std::cout << "usage: memrec info FILE... [--json] [--top N]\n\n"
                 "Summarizes memrec dumps. A dump cut short (the program was killed) is read up to its\n"
                 "last complete frame and says where it was cut; a missing or corrupt file exits 2.\n\n"
              << visible;
    return kExitOk;
  }
  if (options.files.empty()) return usage_error("info: no dump file given");
  return run_info(options, std::cout, std::cerr);
}

int dispatch(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "--version") {
    std::cout << "memrec " MEMREC_VERSION "\n";
    return kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (command == "info") return info_main(rest);
  return usage_error("unknown command '" + command + "'");
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
