// `memrec info`: its options and --help; the work is reports/info_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/parallel_for.h"
#include "reports/info_command.h"

namespace memrec::analyzer {

int info_main(const std::vector<std::string>& args) {
  InfoOptions options;
  po::options_description visible("Options");
  visible.add_options()                                                                                        //
      ("help,h", "show this help")                                                                             //
      ("json", po::bool_switch(&options.json), "print JSON: one object per file, an array for several files")  //
      ("top", po::value(&options.top_leaks)->default_value(10), "leak groups to list in the text output")      //
      ("threads", po::value(&options.threads)->default_value(0), kThreadsHelp);
  po::variables_map vm;
  if (const auto done =
          parse_dump_command(args, visible, options.files, "info",
                             "usage: memrec info FILE... [--json] [--top N]\n\n"
                             "Summarizes memrec dumps. A dump cut short (the program was killed) is read up to its\n"
                             "last complete frame and says where it was cut; a missing or corrupt file exits 2.\n",
                             vm)) {
    return *done;
  }
  set_worker_threads(options.threads);
  return run_info(options, std::cout, std::cerr);
}

}  // namespace memrec::analyzer
