// What every command line shares (Boost.Program_options): parsing, the usage
// error, the options of the commands that load dumps. Used by cli/*_cli.cpp only.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "load/dump_loader.h"

namespace memrec::analyzer {

namespace po = boost::program_options;

// Prints `message` and where to find the usage; returns the usage exit code.
int usage_error(const std::string& message);

// Parses `args` into `vm`; false (after printing why) on a usage error.
// `parsed`, if given, gets the options in command-line order (diff's ranges need it).
bool parse(const std::vector<std::string>& args, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, std::string_view command,
           po::parsed_options* parsed = nullptr);

// The options of every command that loads and symbolizes dumps.
template <typename Options>
void add_load_options(po::options_description& visible, Options& options) {
  visible.add_options()                                                                                 //
      ("debug-dir", po::value(&options.debug_dirs), "also look for debug files here (repeatable)")      //
      ("no-progress", "show no progress (a bar on a terminal, else a line every 10 s of a long load)")  //
      ("threads", po::value(&options.threads)->default_value(0), kThreadsHelp);
}

// Parses a command whose arguments are dump files, after its options. Returns
// the exit code when nothing is left to do (help printed, or a usage error).
std::optional<int> parse_dump_command(const std::vector<std::string>& args, const po::options_description& visible,
                                      std::vector<std::string>& files, std::string_view command, std::string_view help,
                                      po::variables_map& vm, po::parsed_options* parsed = nullptr);

// Sets `out` to `value` if option `name` was given.
void optional_value(const po::variables_map& vm, const char* name, const std::string& value,
                    std::optional<std::string>& out);

}  // namespace memrec::analyzer
