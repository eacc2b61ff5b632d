// The shared half of every command line: see command_line.h.
#include "cli/command_line.h"

#include <iostream>

#include "common/exit_codes.h"

namespace memrec::analyzer {

int usage_error(const std::string& message) {
  std::cerr << "memrec: " << message << "\nRun 'memrec --help' for usage.\n";
  return kExitUsage;
}

bool parse(const std::vector<std::string>& args, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, std::string_view command,
           po::parsed_options* parsed) {
  try {
    po::parsed_options options = po::command_line_parser(args).options(all).positional(positional).run();
    po::store(options, vm);
    po::notify(vm);
    if (parsed != nullptr) *parsed = std::move(options);
  } catch (const po::error& e) {
    usage_error(std::string(command) + ": " + e.what());
    return false;
  }
  return true;
}

std::optional<int> parse_dump_command(const std::vector<std::string>& args, const po::options_description& visible,
                                      std::vector<std::string>& files, std::string_view command, std::string_view help,
                                      po::variables_map& vm, po::parsed_options* parsed) {
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files), "dump file");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("file", -1);
  if (!parse(args, all, positional, vm, command, parsed)) return kExitUsage;
  if (vm.count("help") != 0) {
    std::cout << help << "\n" << visible;
    return kExitOk;
  }
  if (files.empty()) return usage_error(std::string(command) + ": no dump file given");
  return std::nullopt;
}

void optional_value(const po::variables_map& vm, const char* name, const std::string& value,
                    std::optional<std::string>& out) {
  if (vm.count(name) != 0) out = value;
}

}  // namespace memrec::analyzer
