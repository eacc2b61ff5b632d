// Parses `memrec export` and `memrec diff` arguments and runs them.
#include "export/export_cli.h"

#include <boost/program_options.hpp>
#include <iostream>

#include "diff/diff_command.h"
#include "exit_codes.h"
#include "export/export_command.h"
#include "load/dump_loader.h"
#include "model/spill_buffer.h"

namespace po = boost::program_options;

namespace memrec::analyzer {
namespace {

int usage(const std::string& message) {
  std::cerr << "memrec: " << message << "\nRun 'memrec --help' for usage.\n";
  return kExitUsage;
}

// `parsed`, if given, gets the options in command-line order (diff's ranges need it).
bool parse(const std::vector<std::string>& args, const po::options_description& visible, po::variables_map& vm,
           std::vector<std::string>& files, const char* command, po::parsed_options* parsed = nullptr) {
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files), "dump file");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("file", -1);
  try {
    po::parsed_options options = po::command_line_parser(args).options(all).positional(positional).run();
    po::store(options, vm);
    po::notify(vm);
    if (parsed != nullptr) *parsed = std::move(options);
  } catch (const po::error& e) {
    usage(std::string(command) + ": " + e.what());
    return false;
  }
  return true;
}

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

void optional_value(const po::variables_map& vm, const char* name, const std::string& value,
                    std::optional<std::string>& out) {
  if (vm.count(name) != 0) out = value;
}

}  // namespace

int export_main(const std::vector<std::string>& args) {
  ExportOptions options;
  ExportFilterOptions& filter = options.filter;
  std::string output;
  std::string spill_dir = default_spill_directory();
  std::string from;
  std::string to;
  po::options_description visible("Options");
  visible.add_options()                                                                                        //
      ("help,h", "show this help")                                                                             //
      ("format,f", po::value(&options.format), "collapsed, pprof, massif, svg, json or heaptrack (required)")  //
      ("output,o", po::value(&output), "write here instead of stdout")                                         //
      ("metric,m", po::value(&options.metric)->default_value(options.metric),
       "collapsed and svg: allocated, allocations, leaked, leaked-count, peak, live-at-end, temporary or "
       "runtime-retained")  //
      ("from", po::value(&from),
       "count only events from this time on (1.5s, 200ms, +3s from the start, or mark:LABEL)")      //
      ("to", po::value(&to), "count only events up to this time")                                   //
      ("debug-dir", po::value(&options.debug_dirs), "also look for debug files here (repeatable)")  //
      ("threads", po::value(&options.threads)->default_value(0), kThreadsHelp)                      //
      ("spill-dir", po::value(&spill_dir), kSpillDirHelp)                                           //
      ("raw-frames", po::bool_switch(&options.raw_frames),
       "pprof, collapsed, svg, json: keep allocator and standard-library frames as the stacks' leaves");
  po::options_description filters("Filters (only the allocations that pass every one count; not for heaptrack)");
  std::string thread_index, site, match, search, min_size, max_size, min_life, max_life, alive_at;
  filters.add_options()                                                                                        //
      ("thread-index", po::value(&thread_index), "made by this thread: its index, as memrec info lists them")  //
      ("site", po::value(&site), "made at this call site: its id in memrec view")                              //
      ("match", po::value(&match), "at a call site with a function or library matching this regex")            //
      ("search", po::value(&search), "at a call site with a frame whose name contains this text")              //
      ("min-size", po::value(&min_size), "of at least this many bytes (4096, 4KiB, 1M)")                       //
      ("max-size", po::value(&max_size), "of at most this many bytes")                                         //
      ("min-lifetime", po::value(&min_life), "freed this long after, or never (1ms, 2s)")                      //
      ("max-lifetime", po::value(&max_life), "freed at most this long after")                                  //
      ("alive-at", po::value(&alive_at), "live at this time since the start")                                  //
      ("leaked-only", po::bool_switch(&filter.leaked_only), "live at the end of the range");
  visible.add(filters);
  po::variables_map vm;
  if (!parse(args, visible, vm, options.files, "export")) return kExitUsage;
  if (vm.count("help") != 0) {
    std::cout << "usage: memrec export FILE... --format F [-o OUT] [--metric M] [--from T] [--to T] [FILTER]...\n\n"
                 "Writes the dumps' heap profile for other tools (docs/exports.md):\n"
                 "  collapsed  folded stacks for flamegraph.pl, inferno, speedscope (one --metric)\n"
                 "  pprof      gzipped profile.proto: alloc_objects, alloc_space, inuse_objects,\n"
                 "             inuse_space (inuse: live at the end of the range) for go tool pprof\n"
                 "  massif     valgrind massif.out (ms_print, massif-visualizer); one dump\n"
                 "  svg        a standalone interactive flamegraph (one --metric)\n"
                 "  json       the memrec report --json document with every call site\n"
                 "  heaptrack  heaptrack's data file (heaptrack_print, heaptrack_gui); one dump,\n"
                 "             the whole run\n"
                 "OUT ending in .zst or .gz is written through zstd or gzip (pprof is always gzip).\n"
                 "With filters, the profile is that of the allocations that pass them, as if the\n"
                 "program had made no other (its peak too); memrec view's downloads pass its filters.\n"
                 "Exit codes: 0 ok, 1 usage, 2 bad input (missing, corrupt or not a dump), 3 internal.\n\n"
              << visible;
    return kExitOk;
  }
  if (options.files.empty()) return usage("export: no dump file given");
  set_spill_directory(spill_dir);
  if (options.format.empty()) return usage(std::string("export: --format is required (") + kExportFormats + ")");
  optional_value(vm, "output", output, options.output);
  optional_value(vm, "from", from, options.from);
  optional_value(vm, "to", to, options.to);
  optional_value(vm, "thread-index", thread_index, filter.thread_index);
  optional_value(vm, "site", site, filter.site);
  optional_value(vm, "match", match, filter.match);
  optional_value(vm, "search", search, filter.search);
  optional_value(vm, "min-size", min_size, filter.min_size);
  optional_value(vm, "max-size", max_size, filter.max_size);
  optional_value(vm, "min-lifetime", min_life, filter.min_lifetime);
  optional_value(vm, "max-lifetime", max_life, filter.max_lifetime);
  optional_value(vm, "alive-at", alive_at, filter.alive_at);
  return run_export(options, std::cout, std::cerr);
}

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
  if (!parse(args, visible, vm, options.files, "diff", &parsed)) return kExitUsage;
  if (vm.count("help") != 0) {
    std::cout << "usage: memrec diff BASE NEW [--from T] [--to T] [--json] [--fail-if T]...\n"
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
                 "Exit codes: 0 ok, 1 usage, 2 bad input, 3 internal, 4 a --fail-if threshold crossed.\n\n"
              << visible;
    return kExitOk;
  }
  if (options.files.empty()) return usage("diff: no dump file given");
  options.ranges = ranges_in_order(parsed);
  optional_value(vm, "base-from", base_from, options.base_from);
  optional_value(vm, "base-to", base_to, options.base_to);
  optional_value(vm, "new-from", new_from, options.new_from);
  optional_value(vm, "new-to", new_to, options.new_to);
  if (vm.count("warmup") != 0) options.warmup = vm["warmup"].as<std::string>();
  return run_diff(options, std::cout, std::cerr);
}

}  // namespace memrec::analyzer
