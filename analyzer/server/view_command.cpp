// Loads the dumps one after another into memory (reports and timelines, not
// events), then hands them to the HTTP server. Unlike `report`, a file that
// does not load stops the command: a UI missing one of the asked-for dumps
// would silently mislead.
#include "server/view_command.h"

#include <unistd.h>

#include <set>

#include "exit_codes.h"
#include "memrec/reader/file_header_reader.h"
#include "memrec/reader/mapped_file.h"
#include "reports/progress_bar.h"
#include "server/http_server.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

int run_view(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  if (options.port < 0 || options.port > 65535) {
    err << "memrec: view: --port must be from 0 to 65535\n";
    return kExitUsage;
  }
  server::ViewData data;
  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  for (const std::string& path : options.files) {
    ProgressBar bar(stderr, options.progress && ProgressBar::is_terminal(STDERR_FILENO), "loading " + path);
    LoadOptions load{options.threads, [&bar](std::size_t done, std::size_t total) { bar.update(done, total); }};
    // The timeline's buckets count from the dump's start, in its header.
    auto start = [&]() -> Result<std::uint64_t> {
      auto file = reader::MappedFile::open(path);
      if (!file) return file.error();
      auto header = reader::parse_file_header(file->bytes(), path);
      if (!header) return header.error();
      return header->start_mono_ns;
    }();
    if (!start) {
      err << "memrec: " << start.error().message << "\n";
      return kExitBadInput;
    }
    HeapTimeline timeline(*start);
    auto report = build_heap_report(path, RelativeWindow{}, load, symbolizer, &timeline);
    if (!report) {
      err << "memrec: " << report.error().message << "\n";
      return kExitBadInput;
    }
    if (report->stopped) {
      err << "memrec: " << report->stopped->message << " (the view covers the frames before it)\n";
    }
    data.dumps.push_back(server::ViewDump{std::move(*report), std::move(timeline)});
  }
  const std::vector<std::string> all_warnings = symbolizer.warnings();
  const std::set<std::string> warnings(all_warnings.begin(), all_warnings.end());
  for (const std::string& w : warnings) err << "memrec: " << w << "\n";
  data.warnings.assign(warnings.begin(), warnings.end());

  server::ServeOptions serve_options{options.host, options.port};
  std::string error;
  const bool served = server::serve(
      data, serve_options,
      [&](int port) {
        const bool v6 = options.host.find(':') != std::string::npos;
        const std::string host = v6 ? "[" + options.host + "]" : options.host;
        out << "memrec: serving " << data.dumps.size() << (data.dumps.size() == 1 ? " dump" : " dumps") << " at http://"
            << host << ":" << port << "/ (Ctrl-C stops)" << std::endl;
      },
      error);
  if (!served) {
    err << "memrec: view: " << error << "\n";
    return kExitInternal;
  }
  return kExitOk;
}

}  // namespace memrec::analyzer
