// `memrec report`: its options and --help; the work is reports/report_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/parallel_for.h"
#include "reports/report_command.h"

namespace memrec::analyzer {

int report_main(const std::vector<std::string>& args) {
  ReportOptions options;
  std::string from;
  std::string to;
  std::string group;
  std::string warmup;
  std::string retained;
  std::string at;
  po::options_description visible("Options");
  visible.add_options()                                                                        //
      ("help,h", "show this help")                                                             //
      ("json", po::bool_switch(&options.json), "print JSON (the schema in docs/analyzer.md)")  //
      ("top", po::value(&options.top)->default_value(10), "call sites to list per ranking")    //
      ("from", po::value(&from),
       "count only events from this time on (1.5s, 200ms, +3s from the start, or mark:LABEL)")  //
      ("to", po::value(&to), "count only events up to this time")                               //
      ("raw-frames", po::bool_switch(&options.raw_frames),
       "name each site by its innermost frame, allocator and standard-library frames included")  //
      ("group", po::value(&group)->default_value("stack"),
       "stack: a site per distinct stack; label: sites whose label frame is the same line merged, "
       "their paths listed")  //
      ("histograms", po::bool_switch(&options.histograms),
       "add the allocations' size and lifetime classes (powers of two) to the text; --json always has them")  //
      ("growth", po::bool_switch(&options.growth),
       "rank the call sites by the growth of their live bytes over the range (a second pass over the dump)")  //
      ("warmup", po::value(&warmup),
       "with --growth: leave out this long after the range's start (default: a tenth)")  //
      ("retained", po::value(&retained),
       "A..B: the blocks allocated from A to B and still live at --at, by call site (a second pass)")  //
      ("at", po::value(&at), "with --retained: the instant (default: B)");
  add_load_options(visible, options);
  po::variables_map vm;
  if (const auto done =
          parse_dump_command(args, visible, options.files, "report",
                             "usage: memrec report FILE... [--json] [--top N] [--from T] [--to T] [--raw-frames]\n"
                             "                     [--group stack|label] [--histograms] [--growth [--warmup T]]\n"
                             "                     [--retained A..B [--at C]] [--debug-dir DIR]...\n\n"
                             "Reports each dump's heap: run time; allocations, frees, bytes allocated; the peak\n"
                             "(bytes, when, RSS then); what leaked and what the C/C++ runtime kept for itself;\n"
                             "temporary allocations; and the top call sites by leaked bytes, bytes live at the\n"
                             "peak, bytes allocated, allocation count and temporaries, with their symbolized\n"
                             "stacks. Dumps of one process tree are reported per process, as a tree.\n"
                             "--from/--to count only the events in that range: leaked is then what was\n"
                             "allocated in it and still live at its end, the peak the highest within it.\n"
                             "A dump cut short is reported up to where it was cut.\n"
                             "--growth ranks the sites whose live bytes kept growing (a service's leak that it\n"
                             "frees at shutdown): a least-squares slope per minute over the range after a warm-up,\n"
                             "its R2 and the share of the range it grew in (docs/analyzer.md, \"Growth\").\n"
                             "--retained A..B lists what was allocated from A to B and is still live at --at C\n"
                             "(default B): what a load test or a phase left behind.\n"
                             "Each site is named by its innermost frame of the program's own code; the allocator's,\n"
                             "the C library's and the C++ and Rust standard libraries' frames under it are listed,\n"
                             "marked [library] (docs/analyzer.md, \"Call site labels\").\n"
                             "Exit codes: 0 ok, 1 usage, 2 bad input (missing, corrupt or not a dump), 3 internal.\n",
                             vm)) {
    return *done;
  }
  if (vm.count("from") != 0) options.from = from;
  if (vm.count("to") != 0) options.to = to;
  if (vm.count("warmup") != 0) options.warmup = warmup;
  if (vm.count("retained") != 0) options.retained = retained;
  if (vm.count("at") != 0) options.at = at;
  if (group != "stack" && group != "label") {
    std::cerr << "memrec report: --group takes stack or label, not '" << group << "'\n";
    return kExitUsage;
  }
  options.group_by_label = group == "label";
  options.progress = vm.count("no-progress") == 0;
  set_worker_threads(options.threads);
  return run_report(options, std::cout, std::cerr);
}

}  // namespace memrec::analyzer
