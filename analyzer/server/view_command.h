// Runs `memrec view FILE...` once main() has parsed the arguments: prints
// the URL and serves the web UI while it loads the dumps (view_loads.h).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

namespace memrec::analyzer {

// When a dump is served before its allocation table is built (view_command.cpp).
enum class ServeEarly { kAuto, kAlways, kNever };
// kAuto serves files larger than this early.
inline constexpr std::uint64_t kServeEarlyBytes = 128ull << 20;

struct ViewOptions {
  std::vector<std::string> files;
  std::string host = "127.0.0.1";
  int port = 9999;  // 0: any free port (printed)
  std::vector<std::string> debug_dirs;
  unsigned threads = 0;
  bool progress = true;
  std::string spill_dir;  // load/spill_buffer.h; "" keeps allocation tables in memory
  ServeEarly serve_early = ServeEarly::kAuto;
  // --follow: `files` are dumps still being written and directories that
  // new dumps appear in, read again every `follow_interval_ms`
  // (server/view_follow.cpp, docs/design/follow.md).
  bool follow = false;
  unsigned follow_interval_ms = 2000;
};

// Returns only on failure: kExitUsage (bad port), kExitBadInput (the only
// file, or every file, did not load), kExitInternal (could not listen).
int run_view(const ViewOptions& options, std::ostream& out, std::ostream& err);
// The "memrec: serving N dumps at URL" line, with the warning for an
// address other than loopback.
void print_serving_line(std::ostream& out, const std::string& host, int port, std::size_t dumps);
// run_view with --follow; returns only on failure too.
int run_view_follow(const ViewOptions& options, std::ostream& out, std::ostream& err);

}  // namespace memrec::analyzer
