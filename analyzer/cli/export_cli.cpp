// `memrec export`: its options and --help; the work is export/export_command.cpp.
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_line.h"
#include "cli/commands.h"
#include "common/exit_codes.h"
#include "common/parallel_for.h"
#include "export/export_command.h"
#include "load/spill_buffer.h"

namespace memrec::analyzer {

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
  if (const auto done = parse_dump_command(
          args, visible, options.files, "export",
          "usage: memrec export FILE... --format F [-o OUT] [--metric M] [--from T] [--to T] [FILTER]...\n\n"
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
          "Exit codes: 0 ok, 1 usage, 2 bad input (missing, corrupt or not a dump), 3 internal.\n",
          vm)) {
    return *done;
  }
  set_spill_directory(spill_dir);
  set_worker_threads(options.threads);
  if (options.format.empty()) return usage_error(std::string("export: --format is required (") + kExportFormats + ")");
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

}  // namespace memrec::analyzer
