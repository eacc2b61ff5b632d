// The `memrec` command. This file only parses arguments (Boost.Program_options)
// and dispatches to a subcommand; the work lives in load/, model/ and reports/.
// Exceptions from third-party code stop here: exit 3 with one line on stderr.
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/program_options.hpp>

#include "cli/export_cli.h"
#include "common/exit_codes.h"
#include "common/parallel_for.h"
#include "ctl/ctl_command.h"
#include "load/dump_loader.h"
#include "load/spill_buffer.h"
#include "reports/info_command.h"
#include "reports/report_command.h"
#include "run/environment_help.h"
#include "run/run_command.h"
#include "server/view_command.h"

namespace po = boost::program_options;
using namespace memrec::analyzer;

namespace {

constexpr std::string_view kUsage =
    "usage: memrec COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "Commands:\n"
    "  run [OPTIONS] -- CMD ARGS...\n"
    "                  run a program under libmemrec.so and print where its dumps went\n"
    "  report FILE...  the heap report of memrec dumps: run time, allocations, peak,\n"
    "                  leaks, temporaries and the top call sites, per process\n"
    "  view FILE...    serve a browser UI of memrec dumps on http://127.0.0.1:9999/\n"
    "  export FILE... --format F\n"
    "                  write the heap profile for other tools: pprof, collapsed, svg,\n"
    "                  massif, heaptrack, json\n"
    "  diff BASE NEW   compare two dumps, or two --from/--to ranges of one, call site\n"
    "                  by call site; --fail-if for CI\n"
    "  info FILE...    summarize memrec dumps (.dat): header, counts, threads, modules,\n"
    "                  live heap at the end, peak, leaks by stack\n"
    "  ctl PID start|stop|status|mark LABEL\n"
    "                  control a running process's recording through its control socket\n"
    "  mark PID LABEL  set a marker in a running process's dump (memrec ctl PID mark LABEL)\n"
    "  help [COMMAND | env]\n"
    "                  this text, a command's options, or the MEMREC_* environment\n"
    "                  variables that libmemrec.so reads\n"
    "\n"
    "Run 'memrec COMMAND --help' for a command's options.\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input (missing, corrupt or not a dump), 3 internal error.\n";

int usage_error(const std::string& message) {
  std::cerr << "memrec: " << message << "\nRun 'memrec --help' for usage.\n";
  return kExitUsage;
}

// Parses `args` into `vm`; false (after printing why) on a usage error.
bool parse(const std::vector<std::string>& args, const po::options_description& all,
           const po::positional_options_description& positional, po::variables_map& vm, std::string_view command) {
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    usage_error(std::string(command) + ": " + e.what());
    return false;
  }
  return true;
}

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
                                      po::variables_map& vm) {
  po::options_description hidden;
  hidden.add_options()("file", po::value(&files), "dump file");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("file", -1);
  if (!parse(args, all, positional, vm, command)) return kExitUsage;
  if (vm.count("help") != 0) {
    std::cout << help << "\n" << visible;
    return kExitOk;
  }
  if (files.empty()) return usage_error(std::string(command) + ": no dump file given");
  return std::nullopt;
}

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

constexpr std::string_view kCtlHelp =
    "Talks to the recorder inside a running process (started under libmemrec.so, e.g. by\n"
    "memrec run) through its control socket, without signals: the program may own SIGUSR1.\n"
    "  start, stop     switch the recording of allocations on or off (frees are always\n"
    "                  recorded); the dump notes each switch as from 'ctl'\n"
    "  status          recording or paused, the pid and the dump's path\n"
    "  mark LABEL      a named instant in the dump (at most 255 bytes): ranges accept it\n"
    "                  as mark:LABEL (memrec report --from mark:LABEL)\n"
    "Only the process's owner (or root) may control it. Prints the recorder's one-line\n"
    "answer. Exit codes: 0 done, 1 usage, 2 the process is gone, stopped, another user's,\n"
    "has no control socket (not recorded, or fewer than 32 allocations on one thread so\n"
    "far), or refused the command.\n";

// `ctl` and its shorthand `mark`: PID, the command (given for `mark`), its words.
int ctl_like_main(const std::vector<std::string>& args, std::string_view name, std::optional<std::string> command) {
  CtlOptions options;
  po::options_description visible("Options");
  visible.add_options()("help,h", "show this help");
  po::options_description hidden;
  hidden.add_options()("pid", po::value(&options.pid), "pid");
  if (!command) hidden.add_options()("command", po::value(&options.command), "command");
  hidden.add_options()("label", po::value(&options.label), "label");
  po::options_description all;
  all.add(visible).add(hidden);
  po::positional_options_description positional;
  positional.add("pid", 1);
  if (!command) positional.add("command", 1);
  positional.add("label", -1);
  po::variables_map vm;
  // A label's words may look like options ("mark PID -- -x" is not needed):
  // only a leading --help or -h is memrec's.
  std::vector<std::string> own = args;
  const bool help = !args.empty() && (args[0] == "--help" || args[0] == "-h");
  if (!help) own.insert(own.begin(), "--");
  if (!parse(own, all, positional, vm, name)) return kExitUsage;
  if (help) {
    std::cout << (command ? "usage: memrec mark PID LABEL\n\nThe shorthand of memrec ctl PID mark LABEL.\n"
                          : "usage: memrec ctl PID start|stop|status|mark LABEL\n\n")
              << kCtlHelp << "\n"
              << visible;
    return kExitOk;
  }
  if (command) options.command = *command;
  if (options.pid.empty()) return usage_error(std::string(name) + ": no PID given");
  if (options.command.empty())
    return usage_error(std::string(name) + ": no command given (start, stop, status or mark LABEL)");
  return run_ctl(options, std::cout, std::cerr);
}

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
  add_load_options(visible, options);
  po::variables_map vm;
  if (const auto done =
          parse_dump_command(args, visible, options.files, "view",
                             "usage: memrec view FILE... [--port N] [--host ADDR] [--debug-dir DIR]...\n\n"
                             "Loads the dumps, prints the URL and serves a browser UI of them (overview with a\n"
                             "timeline of the heap and RSS, call sites with their backtraces) until stopped.\n"
                             "The JSON API behind it is in docs/api.md.\n"
                             "Exit codes: 1 usage, 2 bad input (missing, corrupt or not a dump), 3 cannot listen.\n",
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

int dispatch_command(const std::string& command, const std::vector<std::string>& rest) {
  if (command == "info") return info_main(rest);
  if (command == "report") return report_main(rest);
  if (command == "run") return run_main(rest);
  if (command == "export") return export_main(rest);
  if (command == "diff") return diff_main(rest);
  if (command == "view") return view_main(rest);
  if (command == "ctl") return ctl_like_main(rest, "ctl", std::nullopt);
  if (command == "mark") return ctl_like_main(rest, "mark", "mark");
  return usage_error("unknown command '" + command + "'");
}

int dispatch(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::cerr << kUsage;
    return kExitUsage;
  }
  const std::string& command = args[0];
  if (command == "--help" || command == "-h" || (command == "help" && args.size() == 1)) {
    std::cout << kUsage;
    return kExitOk;
  }
  if (command == "help") {
    if (args.size() > 2) return usage_error("help: one topic at a time (a command or env)");
    if (args[1] == "env") {
      print_environment_help(std::cout);
      return kExitOk;
    }
    if (args[1] == "help") return usage_error("help: 'memrec help' lists the commands");
    return dispatch_command(args[1], {"--help"});
  }
  if (command == "--version") {
    std::cout << "memrec " MEMREC_VERSION "\n";
    return kExitOk;
  }
  return dispatch_command(command, std::vector<std::string>(args.begin() + 1, args.end()));
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
