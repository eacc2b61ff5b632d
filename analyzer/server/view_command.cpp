// Loads the dumps one after another (reports and allocation tables:
// model/allocation_table.h), then hands them to the HTTP server. Unlike
// `report`, a file that does not load stops the command: a UI missing one of
// the asked-for dumps would silently mislead.
//
// A large dump is served as soon as its report is ready, and its table is
// built behind the page by a second pass over the file: the table's builder
// is the slowest part of a load (a 2 GB dump: 32 s for the report alone, 90 s
// with the table), and the whole run's figures, call sites and flamegraphs
// need only the report, the whole run's timeline only the report's pass
// (model/heap_timeline.h). A small dump's table is built in the report's pass.
#include "server/view_command.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <thread>

#include "common/exit_codes.h"
#include "common/progress_bar.h"
#include "load/spill_buffer.h"
#include "server/http_server.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

using Clock = std::chrono::steady_clock;

long long ms_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
}

// Whether --host keeps the view on this machine: 127.0.0.0/8, ::1 (or
// v4-mapped 127.x) or "localhost". Any other name or address is warned about.
bool loopback(const std::string& host) {
  if (host == "localhost") return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

bool serves_early(const ViewOptions& options, const std::string& path) {
  switch (options.serve_early) {
    case ServeEarly::kAlways:
      return true;
    case ServeEarly::kNever:
      return false;
    case ServeEarly::kAuto:
      break;
  }
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) > kServeEarlyBytes;
}

std::string too_many_rows(const std::string& path) {
  return path + " holds more than " + std::to_string(AllocationTableBuilder::kMaxRows) +
         " allocations, more than the view's table can index; memrec report reads it, and memrec export "
         "without filters";
}

// Finishes the table and indexes it by the report's sites; MEMREC_VIEW_STATS
// prints what that took.
void publish_table(server::ViewDump& dump, AllocationTableBuilder& builder, std::ostream& err) {
  const auto streamed = Clock::now();
  AllocationTable table = builder.finish();
  const auto finished = Clock::now();
  table.set_sites(dump.report.sites.site_of_stack, static_cast<std::uint32_t>(dump.report.sites.sites.size()));
  const auto indexed = Clock::now();
  if (std::getenv("MEMREC_VIEW_STATS") != nullptr) {
    const std::string& path = dump.report.dump.path;
    err << "memrec: view: " << path << ": " << table.rows() << " allocations, table " << table.memory_bytes()
        << " bytes (" << (table.rows() == 0 ? 0 : table.memory_bytes() / table.rows()) << " a row)\n"
        << "memrec: view: " << path << ": after the pass: the table's finish " << ms_between(streamed, finished)
        << " ms, its per-site index " << ms_between(finished, indexed) << " ms\n";
  }
  dump.slot->publish(std::move(table));
}

// The second pass over a dump already served: the table, checked against the
// report it must agree with (the file could have changed in between).
void build_table_behind(server::ViewDump& dump, const ViewOptions& options, const std::vector<std::string>& warned,
                        std::ostream& err) {
  const std::string& path = dump.report.dump.path;
  const auto start = Clock::now();
  ProgressBar bar(stderr, options.progress, "building the allocation table of " + path,
                  ProgressBar::style_for(STDERR_FILENO));
  server::TableSlot& slot = *dump.slot;
  LoadOptions load{options.threads, [&](std::size_t done, std::size_t total) {
                     slot.progress(done, total);
                     bar.update(done, total);
                   }};
  // What the report read, not what a recording still running has added since.
  load.file_bytes = dump.report.dump.facts.file_bytes;
  AllocationTableBuilder builder;
  Result<ReplayedRun> run = Error{ErrorCode::kInternal, "not run"};
  // On this thread an exception would end the server, not just this table.
  try {
    run = replay_into(path, load, builder);
  } catch (const std::exception& e) {
    run = Error{ErrorCode::kInternal, std::string("internal error: ") + e.what()};
  }
  std::string why;
  if (!run) {
    why = run.error().message;
  } else if (builder.full()) {
    why = too_many_rows(path);
  } else if (run->events != dump.report.events || run->totals.allocations != dump.report.totals.allocations ||
             run->totals.frees != dump.report.totals.frees) {
    why = path + " changed since its report was read (" + std::to_string(run->events) + " events now, " +
          std::to_string(dump.report.events) + " then): load it again";
  }
  if (!why.empty()) {
    err << "memrec: view: no allocation table: " << why << "\n";
    slot.fail(why + ".");
    return;
  }
  try {
    publish_table(dump, builder, err);
  } catch (const std::exception& e) {
    err << "memrec: view: no allocation table: internal error: " << e.what() << "\n";
    slot.fail(std::string("internal error: ") + e.what() + ".");
    return;
  }
  // A spill directory that failed while the table grew (the page's list was made before).
  for (const std::string& w : spill_warnings()) {
    if (std::find(warned.begin(), warned.end(), w) == warned.end()) err << "memrec: " << w << "\n";
  }
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", static_cast<double>(ms_between(start, Clock::now())) / 1000);
  err << "memrec: view: " << path << ": the allocation table is built after " << seconds
      << " s: ranges, instants, the timeline's finer buckets and the allocation list are ready" << std::endl;
}

}  // namespace

void print_serving_line(std::ostream& out, const std::string& host_given, int port, std::size_t dumps) {
  // The wildcard addresses are no place to browse to (chromium refuses
  // 0.0.0.0): the URL names loopback, and the line says who else can read.
  const bool any = host_given == "0.0.0.0" || host_given == "::";
  const bool v6 = host_given.find(':') != std::string::npos;
  const std::string shown = any ? (v6 ? "::1" : "127.0.0.1") : host_given;
  const std::string host = v6 ? "[" + shown + "]" : shown;
  out << "memrec: serving " << dumps << (dumps == 1 ? " dump" : " dumps") << " at http://" << host << ":" << port
      << "/ (Ctrl-C stops)";
  const char* readable = " can read the dumps, their file names, paths and command lines";
  if (any) {
    out << "; listening on every interface: whoever reaches this machine's port " << port << readable;
  } else if (!loopback(host_given)) {
    out << "; listening on " << host_given << ", not loopback: whoever reaches it on port " << port << readable;
  }
  out << std::endl;
}

int run_view(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  if (options.port < 0 || options.port > 65535) {
    err << "memrec: view: --port must be from 0 to 65535\n";
    return kExitUsage;
  }
  if (options.follow) return run_view_follow(options, out, err);
  set_spill_directory(options.spill_dir);
  server::ViewData data;
  std::vector<std::size_t> behind;  // the dumps served before their tables
  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  for (const std::string& path : options.files) {
    const bool early = serves_early(options, path);
    ProgressBar bar(stderr, options.progress, "loading " + path, ProgressBar::style_for(STDERR_FILENO));
    LoadOptions load{options.threads, [&bar](std::size_t done, std::size_t total) { bar.update(done, total); }};
    load.load_progress = [&bar](std::size_t done, std::size_t total, const LoadProgress& read) {
      bar.update(done, total, read);
    };
    AllocationTableBuilder table;
    const auto start = dump_start_ns(path);
    if (!start) {
      err << "memrec: " << start.error().message << "\n";
      return kExitBadInput;
    }
    // Served before its table, a dump shows its whole run's timeline from this pass meanwhile.
    std::optional<HeapTimeline> timeline;
    if (early) timeline.emplace(*start);
    MappingRecord mappings(*start);
    auto report = build_heap_report(path, RelativeWindow{}, load, symbolizer, timeline ? &*timeline : nullptr,
                                    early ? nullptr : &table, nullptr, &mappings);
    if (!report) {
      err << "memrec: " << report.error().message << "\n";
      return kExitBadInput;
    }
    if (table.full()) {
      err << "memrec: view: " << too_many_rows(path) << "\n";
      return kExitBadInput;
    }
    if (report->stopped) {
      err << "memrec: " << report->stopped->message << " (the view covers the frames before it)\n";
    }
    server::ViewDump dump;
    dump.report = std::move(*report);
    mappings.extend_to(dump.end_ns());
    dump.mappings = std::move(mappings);
    if (early) {
      behind.push_back(data.dumps.size());
      timeline->extend_to(dump.end_ns());
      dump.early_timeline = std::move(timeline);
    } else {
      publish_table(dump, table, err);
    }
    server::index_site_labels(dump);
    server::set_whole_run(dump);
    data.dumps.push_back(std::move(dump));
  }
  data.export_options = {options.debug_dirs, options.threads};
  std::vector<std::string> all_warnings = symbolizer.warnings();
  const std::vector<std::string> spill = spill_warnings();
  all_warnings.insert(all_warnings.end(), spill.begin(), spill.end());
  const std::set<std::string> warnings(all_warnings.begin(), all_warnings.end());
  for (const std::string& w : warnings) err << "memrec: " << w << "\n";
  data.warnings.assign(warnings.begin(), warnings.end());

  // Started once the server listens; joined (after its pass) if serving fails.
  std::jthread tables;
  server::ServeOptions serve_options{options.host, options.port};
  std::string error;
  const bool served = server::serve(
      data, serve_options,
      [&](int port) {
        print_serving_line(out, options.host, port, data.dumps.size());
        if (behind.empty()) return;
        err << "memrec: view: the whole run's figures, timeline, call sites and flamegraphs are served; ranges, "
               "instants and the allocation list follow once the allocation table is built"
            << std::endl;
        tables = std::jthread([&data, &options, &err, behind] {
          for (const std::size_t i : behind) build_table_behind(data.dumps[i], options, data.warnings, err);
        });
      },
      error);
  if (!served) {
    err << "memrec: view: " << error << "\n";
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace memrec::analyzer
