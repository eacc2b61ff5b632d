// Loads the dumps one after another into memory (reports and allocation
// tables: model/allocation_table.h), then hands them to the HTTP server. Unlike `report`, a file that
// does not load stops the command: a UI missing one of the asked-for dumps
// would silently mislead.
#include "server/view_command.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>

#include "exit_codes.h"
#include "model/spill_buffer.h"
#include "reports/progress_bar.h"
#include "server/http_server.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

int run_view(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  if (options.port < 0 || options.port > 65535) {
    err << "memrec: view: --port must be from 0 to 65535\n";
    return kExitUsage;
  }
  set_spill_directory(options.spill_dir);
  server::ViewData data;
  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  for (const std::string& path : options.files) {
    ProgressBar bar(stderr, options.progress, path, ProgressBar::style_for(STDERR_FILENO));
    LoadOptions load{options.threads, [&bar](std::size_t done, std::size_t total) { bar.update(done, total); }};
    AllocationTableBuilder table;
    auto report = build_heap_report(path, RelativeWindow{}, load, symbolizer, nullptr, &table);
    if (!report) {
      err << "memrec: " << report.error().message << "\n";
      return kExitBadInput;
    }
    if (table.full()) {
      err << "memrec: view: " << path << " holds more than " << AllocationTableBuilder::kMaxRows
          << " allocations, more than the view's table can index; memrec report reads it, and memrec export "
             "without filters\n";
      return kExitBadInput;
    }
    if (report->stopped) {
      err << "memrec: " << report->stopped->message << " (the view covers the frames before it)\n";
    }
    const auto streamed = std::chrono::steady_clock::now();
    server::ViewDump dump{std::move(*report), table.finish(), {}, {}};
    const auto finished = std::chrono::steady_clock::now();
    dump.table.set_sites(dump.report.sites.site_of_stack, static_cast<std::uint32_t>(dump.report.sites.sites.size()));
    const auto indexed = std::chrono::steady_clock::now();
    server::index_site_text(dump);
    server::set_whole_run(dump);
    if (std::getenv("MEMREC_VIEW_STATS") != nullptr) {
      const auto ms = [](auto a, auto b) {
        return std::chrono::duration_cast<std::chrono::milliseconds>(b - a).count();
      };
      err << "memrec: view: " << path << ": " << dump.table.rows() << " allocations, table "
          << dump.table.memory_bytes() << " bytes ("
          << (dump.table.rows() == 0 ? 0 : dump.table.memory_bytes() / dump.table.rows()) << " a row)\n"
          << "memrec: view: " << path << ": after the report: the table's finish " << ms(streamed, finished)
          << " ms, its per-site index " << ms(finished, indexed) << " ms, the rest "
          << ms(indexed, std::chrono::steady_clock::now()) << " ms\n";
    }
    data.dumps.push_back(std::move(dump));
  }
  data.export_options = {options.debug_dirs, options.threads};
  std::vector<std::string> all_warnings = symbolizer.warnings();
  const std::vector<std::string> spill = spill_warnings();
  all_warnings.insert(all_warnings.end(), spill.begin(), spill.end());
  const std::set<std::string> warnings(all_warnings.begin(), all_warnings.end());
  for (const std::string& w : warnings) err << "memrec: " << w << "\n";
  data.warnings.assign(warnings.begin(), warnings.end());

  server::ServeOptions serve_options{options.host, options.port};
  std::string error;
  const bool served = server::serve(
      data, serve_options,
      [&](int port) {
        // The wildcard addresses are no place to browse to (chromium refuses
        // 0.0.0.0): the URL names loopback, and the line says who else can read.
        const bool any = options.host == "0.0.0.0" || options.host == "::";
        const bool v6 = options.host.find(':') != std::string::npos;
        const std::string shown = any ? (v6 ? "::1" : "127.0.0.1") : options.host;
        const std::string host = v6 ? "[" + shown + "]" : shown;
        out << "memrec: serving " << data.dumps.size() << (data.dumps.size() == 1 ? " dump" : " dumps") << " at http://"
            << host << ":" << port << "/ (Ctrl-C stops)";
        if (any)
          out << "; listening on every interface: whoever reaches this machine's port " << port << " can read them";
        out << std::endl;
      },
      error);
  if (!served) {
    err << "memrec: view: " << error << "\n";
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace memrec::analyzer
