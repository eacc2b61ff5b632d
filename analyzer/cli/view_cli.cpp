// `memrec view`: its options and --help; the work is server/view_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/parallel_for.h"
#include "load/spill_buffer.h"
#include "server/view_command.h"

namespace memrec::analyzer {

int view_main(const std::vector<std::string>& args) {
  ViewOptions options;
  po::options_description visible("Options");
  visible.add_options()                                                                                       //
      ("help,h", "show this help")                                                                            //
      ("port", po::value(&options.port)->default_value(options.port), "TCP port (0: any free one, printed)")  //
      ("host", po::value(&options.host)->default_value(options.host),
       "address to listen on; anything but 127.0.0.1 or ::1 lets other machines see the dumps");
  options.spill_dir = default_spill_directory();
  visible.add_options()("spill-dir", po::value(&options.spill_dir), kSpillDirHelp);
  std::string early = "auto";
  visible.add_options()(
      "serve-early", po::value(&early)->default_value(early),
      "auto, always or never: serve a dump as soon as its report is read and build its allocation "
      "table behind the page, in a second pass (auto: files over 128 MiB). Until the table is "
      "built, the whole run's timeline has coarser buckets, and ranges, instants and the allocation list "
      "wait for it");
  visible.add_options()("follow", po::bool_switch(&options.follow),
                        "the FILEs are dumps still being written, or directories new dumps appear in (a "
                        "service's forks and execs): read only what was appended, every --poll-ms, "
                        "and mark each dump live, ended or cut (its process gone without an end). Each "
                        "dump's allocation table grows with it: ranges, instants, the allocation list and "
                        "pprof's ?seconds=N (the next N seconds, waited for) answer while it is written")  //
      ("poll-ms", po::value(&options.follow_interval_ms)->default_value(options.follow_interval_ms),
       "with --follow: how often the dumps are read again");
  add_load_options(visible, options);
  po::variables_map vm;
  if (const auto done =
          parse_dump_command(args, visible, options.files, "view",
                             "usage: memrec view FILE... [--port N] [--host ADDR] [--debug-dir DIR]...\n"
                             "       memrec view --follow FILE|DIR... [--poll-ms N]\n\n"
                             "Prints the URL and serves a browser UI of the dumps (overview with a timeline of\n"
                             "the heap and RSS, call sites with their backtraces) until stopped, while it loads\n"
                             "them, several at once (--threads), each served as soon as it is read.\n"
                             "The JSON API behind it is in docs/api.md.\n"
                             "Exit codes: 1 usage, 2 bad input (the only file, or every file, missing, corrupt\n"
                             "or not a dump), 3 cannot listen.\n",
                             vm)) {
    return *done;
  }
  options.progress = vm.count("no-progress") == 0;
  set_worker_threads(options.threads);
  if (early == "always") {
    options.serve_early = ServeEarly::kAlways;
  } else if (early == "never") {
    options.serve_early = ServeEarly::kNever;
  } else if (early != "auto") {
    std::cerr << "memrec: view: --serve-early must be auto, always or never\n";
    return kExitUsage;
  }
  return run_view(options, std::cout, std::cerr);
}

}  // namespace memrec::analyzer
