// `memrec diff`: its options and --help; the work is diff/diff_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/parallel_for.h"
#include "diff/diff_command.h"

namespace memrec::analyzer {
namespace {

// Diff's --from/--to, read left to right: a --from opens a range, a --to
// closes the open one, or stands alone for [start, T] when there is none.
std::vector<DiffRange> ranges_in_order(const po::parsed_options& parsed) {
  std::vector<DiffRange> ranges;
  bool open = false;
  for (const po::option& o : parsed.options) {
    if (o.value.empty()) continue;
    if (o.string_key == "from") {
      ranges.push_back({o.value.back(), std::nullopt});
      open = true;
    } else if (o.string_key == "to") {
      if (!open) ranges.push_back({});
      ranges.back().to = o.value.back();
      open = false;
    }
  }
  return ranges;
}

}  // namespace

int diff_main(const std::vector<std::string>& args) {
  DiffOptions options;
  std::string base_from;
  std::string base_to;
  std::string new_from;
  std::string new_to;
  po::options_description visible("Options");
  visible.add_options()                                                                                   //
      ("help,h", "show this help")                                                                        //
      ("json", po::bool_switch(&options.json), "print JSON (schema memrec-diff, docs/exports.md)")        //
      ("top", po::value(&options.top)->default_value(options.top), "changed call sites to list in text")  //
      ("fail-if", po::value(&options.fail_if),
       "exit 4 when crossed: METRIC>AMOUNT (peak>5%, leaked>1MiB, allocations>100) or new-leak; "
       "repeatable or comma-separated")  //
      ("from", po::value<std::vector<std::string>>(),
       "a range starts at this time (1.5s, 200ms, mark:LABEL); the first range is BASE's, the second NEW's")  //
      ("to", po::value<std::vector<std::string>>(),
       "the range ends at this time (one range: both dumps' range)")                //
      ("base-from", po::value(&base_from), "BASE counts events from this time on")  //
      ("base-to", po::value(&base_to), "BASE counts events up to this time")        //
      ("new-from", po::value(&new_from), "NEW counts events from this time on")     //
      ("new-to", po::value(&new_to), "NEW counts events up to this time")           //
      ("growth", po::bool_switch(&options.growth),
       "also compare each call site's growth of live bytes (slope, R2) after a warm-up")  //
      ("warmup", po::value<std::string>(),
       "--growth leaves this much of each range out of the fit (default: its first 10 %)")          //
      ("debug-dir", po::value(&options.debug_dirs), "also look for debug files here (repeatable)")  //
      ("threads", po::value(&options.threads)->default_value(0), kThreadsHelp);
  po::variables_map vm;
  po::parsed_options parsed(nullptr);
  if (const auto done =
          parse_dump_command(args, visible, options.files, "diff",
                             "usage: memrec diff BASE NEW [--from T] [--to T] [--json] [--fail-if T]...\n"
                             "       memrec diff DUMP --from A --to B --from C --to D [--json] [--fail-if T]...\n\n"
                             "Compares two dumps (or two ranges of one) call site by call site, matching sites by\n"
                             "their symbolized frames (function, file, line), so different builds and address\n"
                             "layouts compare: growth and shrinkage of peak, leaked and allocated bytes and\n"
                             "counts, new and vanished sites; with --growth, how each site's live bytes grew on\n"
                             "each side (the fit of memrec report --growth).\n"
                             "Ranges are read left to right: each --from opens one, a --to closes it (or alone is\n"
                             "a range from the start). One range applies to both dumps; of two, the first is\n"
                             "BASE's and the second NEW's; one dump needs two. --base-from/--base-to/--new-from/\n"
                             "--new-to set one side's range instead.\n"
                             "Exit codes: 0 ok, 1 usage, 2 bad input, 3 internal, 4 a --fail-if threshold crossed.\n",
                             vm, &parsed)) {
    return *done;
  }
  set_worker_threads(options.threads);
  options.ranges = ranges_in_order(parsed);
  optional_value(vm, "base-from", base_from, options.base_from);
  optional_value(vm, "base-to", base_to, options.base_to);
  optional_value(vm, "new-from", new_from, options.new_from);
  optional_value(vm, "new-to", new_to, options.new_to);
  if (vm.count("warmup") != 0) options.warmup = vm["warmup"].as<std::string>();
  return run_diff(options, std::cout, std::cerr);
}

}  // namespace memrec::analyzer
