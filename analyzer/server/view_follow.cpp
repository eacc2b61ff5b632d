// memrec view --follow: serves the dumps as read so far and, on a thread of
// its own, polls them every interval (server/live_dumps.h). A dump whose
// figures changed gets a new ViewDump, built outside the lock and swapped in
// under it, so a request sees either the old dump or the new one, whole;
// its allocation table takes the poll's events under the lock too, the
// table and the ViewDump changing together.
#include <chrono>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <thread>
#include <utility>
#include <vector>

#include "common/exit_codes.h"
#include "load/spill_buffer.h"
#include "server/http_server.h"
#include "server/live_dumps.h"
#include "server/view_command.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

// Served dumps in the order they started; `served[i]` is LiveDumps index i's
// place in ViewData::dumps, once it has a header.
struct Follow {
  server::LiveDumps live;
  std::vector<std::optional<std::size_t>> served;
};

// One poll: new snapshots of the dumps that changed, then one swap.
void refresh(Follow& f, server::ViewData& data, Symbolizer& symbolizer) {
  const std::vector<std::size_t> changed = f.live.poll();
  f.served.resize(f.live.size());
  std::vector<std::pair<std::size_t, server::ViewDump>> fresh;
  for (const std::size_t i : changed) {
    if (f.live.started(i)) fresh.emplace_back(i, f.live.snapshot(i, symbolizer));
  }
  std::unique_lock<std::shared_mutex> lock;
  if (data.follow_lock) lock = std::unique_lock(*data.follow_lock);
  for (auto& [i, dump] : fresh) {
    f.live.publish(i, dump);
    if (!f.served[i]) {
      f.served[i] = data.dumps.size();
      data.dumps.push_back(std::move(dump));
      data.states.emplace_back();
    } else {
      data.dumps[*f.served[i]] = std::move(dump);
    }
  }
  for (std::size_t i = 0; i < f.served.size(); ++i) {
    if (f.served[i]) data.states[*f.served[i]] = dump_state_name(f.live.state(i));
  }
}

}  // namespace

// run_view has checked the port.
int run_view_follow(const ViewOptions& options, std::ostream& out, std::ostream& err) {
  if (options.follow_interval_ms == 0) {
    err << "memrec: view: --poll-ms must be at least 1\n";
    return kExitUsage;
  }
  set_spill_directory(options.spill_dir);
  FollowOptions follow_options;
  follow_options.load.threads = options.threads;
  follow_options.load.spill_dir = options.spill_dir;
  Follow follow{server::LiveDumps(options.files, follow_options), {}};
  server::ViewData data;
  data.follow_lock = std::make_shared<std::shared_mutex>();
  data.export_options = {options.debug_dirs, options.threads};
  Symbolizer symbolizer(SymbolizerOptions{options.debug_dirs, 0});
  refresh(follow, data, symbolizer);
  for (std::size_t i = 0; i < follow.live.size(); ++i) {
    if (!follow.live.error(i).empty()) err << "memrec: " << follow.live.error(i) << "\n";
  }
  std::jthread poller;
  std::string error;
  const bool served = server::serve(
      data, server::ServeOptions{options.host, options.port},
      [&](int port) {
        print_serving_line(out, options.host, port, data.dumps.size());
        out << "memrec: view: following " << options.files.size()
            << (options.files.size() == 1 ? " file or directory" : " files or directories") << " every "
            << options.follow_interval_ms << " ms" << std::endl;
        poller = std::jthread([&](std::stop_token stop) {
          const auto interval = std::chrono::milliseconds(options.follow_interval_ms);
          while (!stop.stop_requested()) {
            std::this_thread::sleep_for(interval);
            try {
              refresh(follow, data, symbolizer);
            } catch (const std::exception& e) {  // on this thread it would end the server
              err << "memrec: view: following stopped: internal error: " << e.what() << std::endl;
              return;
            }
          }
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
