// /proc/PID/stat's 22nd field is the process's start in clock ticks since
// boot, counted on the boot-time clock (proc(5); kernels from 5.3 on), which
// runs on through suspend; CLOCK_MONOTONIC does not. The two clocks' present
// difference converts one to the other.
#include "load/dump_liveness.h"

#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

namespace memrec::analyzer {
namespace {

std::uint64_t clock_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace

const char* dump_state_name(DumpState state) {
  switch (state) {
    case DumpState::kLive:
      return "live";
    case DumpState::kEnded:
      return "ended";
    case DumpState::kCut:
      return "cut";
  }
  return "?";
}

bool dump_process_alive(std::uint64_t pid, std::uint64_t start_mono_ns) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!in || !std::getline(in, stat)) return false;
  // The command name (field 2) is in parentheses and may hold spaces or
  // parentheses itself: the fields after it start after the last ')'.
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  std::uint64_t start_ticks = 0;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
    if (i == 22) start_ticks = std::stoull(field);
  }
  const long ticks_per_s = sysconf(_SC_CLK_TCK);
  if (start_ticks == 0 || ticks_per_s <= 0) return false;
  const std::uint64_t start_boot_ns = start_ticks * (1'000'000'000ull / static_cast<std::uint64_t>(ticks_per_s));
  const std::uint64_t mono_ns = clock_ns(CLOCK_MONOTONIC);
  const std::uint64_t boot_ns = clock_ns(CLOCK_BOOTTIME);
  const std::uint64_t suspended_ns = boot_ns - std::min(boot_ns, mono_ns);
  const std::uint64_t start_process_mono_ns = start_boot_ns - std::min(start_boot_ns, suspended_ns);
  // The start is counted in whole ticks, rounded down: one tick of slack.
  const std::uint64_t tick_ns = 1'000'000'000ull / static_cast<std::uint64_t>(ticks_per_s);
  return start_process_mono_ns <= start_mono_ns + tick_ns;
}

std::vector<std::string> dumps_in_directory(const std::string& dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::filesystem::path& p = it->path();
    if (p.extension() == ".dat" && it->is_regular_file(ec)) found.push_back(p.string());
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace memrec::analyzer
