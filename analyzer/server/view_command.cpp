// Serves the dumps given to `memrec view` while they load: the server
// listens at once and each dump joins when its report is ready
// (server/view_loads.h, several at a time). A file whose header does not
// read is refused before serving when it is the only one (exit 2, as
// `report`); among several, it is listed as failed and the others are
// served, and the command ends with exit 2 only when none could be.
#include "server/view_command.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <memory>
#include <shared_mutex>

#include "common/exit_codes.h"
#include "load/spill_buffer.h"
#include "server/http_server.h"
#include "server/view_loads.h"

namespace memrec::analyzer {
namespace {

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
  data.follow_lock = std::make_shared<std::shared_mutex>();
  data.export_options = {options.debug_dirs, options.threads};
  data.dumps.resize(options.files.size());
  std::vector<std::size_t> to_load;
  for (std::size_t i = 0; i < options.files.size(); ++i) {
    const std::string& path = options.files[i];
    data.loads.push_back(std::make_unique<server::DumpLoad>(path));
    // A missing file or one that is not a dump is known at once.
    const auto start = dump_start_ns(path);
    if (start) {
      to_load.push_back(i);
      continue;
    }
    err << "memrec: " << start.error().message << "\n";
    data.loads.back()->fail(start.error().message);
  }
  if (to_load.empty()) return kExitBadInput;

  std::function<void()> stop;
  std::atomic<bool> none_served{false};
  ViewLoads loads(data, options, err, [&](std::size_t served) {
    if (served != 0) return;
    none_served = true;
    stop();
  });
  server::ServeOptions serve_options{options.host, options.port, &stop};
  std::string error;
  const bool served = server::serve(
      data, serve_options,
      [&](int port) {
        print_serving_line(out, options.host, port, data.dumps.size());
        loads.start(to_load);
      },
      error);
  if (!served) {
    err << "memrec: view: " << error << "\n";
    return kExitInternal;
  }
  if (none_served) {
    err << "memrec: view: no dump could be loaded: stopped serving\n";
    return kExitBadInput;
  }
  return kExitOk;
}

}  // namespace memrec::analyzer
