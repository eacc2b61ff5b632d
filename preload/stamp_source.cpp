// The choice of stamp_source.h. Runs once in early_init, on the thread of the
// first hook, before its first stamp: reads two small kernel files through
// guarded descriptors (held for a few microseconds) and times the TSC.
//
// auto takes the TSC only where a fenced read costs at most
// kAutoMaxTscReadNs: the counter it replaces costs one `lock xadd` (5-10 ns)
// while a single thread stamps with it and a cross-core transfer of its line
// (40 ns to microseconds) as soon as two threads do; a read of 15 ns or less
// loses a few ns to the first and wins against the second. On a VM where a
// read costs 23-27 ns the hooks were slower with it at 8 threads
// (docs/design/writer.md), so auto keeps the counter there.
#include "stamp_source.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "fd_guard.h"
#include "log.h"
#include "memrec/preload/environment.h"
#include "options.h"

namespace memrec::preload {

alignas(64) std::atomic<bool> g_stamp_tsc{false};

namespace {

std::uint64_t g_read_cost_ns = 0;

// The first bytes of `path`, NUL-terminated; empty if it cannot be read.
std::string_view read_head(const char* path, char* buf, std::size_t size) {
  const int fd = guarded_open(path, O_RDONLY | O_CLOEXEC, 0, /*high=*/false);
  if (fd < 0) return {};
  std::size_t n = 0;
  while (n + 1 < size) {
    const ssize_t got = read(fd, buf + n, size - 1 - n);
    if (got <= 0) break;
    n += static_cast<std::size_t>(got);
  }
  guarded_close(fd);
  buf[n] = '\0';
  return std::string_view(buf, n);
}

bool has_word(std::string_view line, std::string_view word) {
  for (std::size_t at = line.find(word); at != std::string_view::npos; at = line.find(word, at + 1)) {
    const bool starts = at == 0 || line[at - 1] == ' ' || line[at - 1] == '\t';
    const std::size_t end = at + word.size();
    if (starts && (end == line.size() || line[end] == ' ' || line[end] == '\n')) return true;
  }
  return false;
}

// Why the TSC cannot order events across cores here, or nullptr. Linux keeps
// `tsc` as its clocksource only while the TSCs of all CPUs agree (its warp
// check at boot and CPU hotplug, its watchdog since), and constant_tsc with
// nonstop_tsc say the TSC ticks at one rate through frequency changes and
// idle states.
const char* tsc_untrusted() {
  if (!kHaveTsc) return "this machine has no TSC (x86-64 only)";
  char source[64];
  if (read_head("/sys/devices/system/clocksource/clocksource0/current_clocksource", source, sizeof(source)) !=
      "tsc\n") {
    return "the kernel's clocksource is not tsc";
  }
  // The first CPU's flags line ends within the file's first 2 KiB (about
  // 1 KiB of flags on current CPUs); early_init may run on a small stack.
  char info[4096];
  std::string_view text = read_head("/proc/cpuinfo", info, sizeof(info));
  const std::size_t flags = text.find("\nflags");
  if (flags == std::string_view::npos) return "/proc/cpuinfo lists no flags";
  text.remove_prefix(flags + 1);
  const std::string_view line = text.substr(0, text.find('\n'));
  if (!has_word(line, "constant_tsc") || !has_word(line, "nonstop_tsc")) {
    return "the CPU lacks constant_tsc or nonstop_tsc";
  }
  return nullptr;
}

struct TscTiming {
  ClockPair origin;  // the map's start
  double ns_per_tick = 0;
  std::uint64_t read_ns = 0;
};

// The median cost of 256 back-to-back fenced reads, and the TSC's rate over
// at least 20 us (the map steers out the rate's error: tsc_clock.cpp).
bool time_tsc(TscTiming& out) {
  constexpr int kReads = 256;
  std::uint64_t ticks[kReads];
  const ClockPair first = read_clock_pair();
  std::uint64_t prev = tsc_read();
  for (std::uint64_t& t : ticks) {
    const std::uint64_t now = tsc_read();
    t = now - prev;
    prev = now;
  }
  ClockPair last;
  do {
    last = read_clock_pair();
  } while (last.ns < first.ns + 20'000);
  if (last.tsc <= first.tsc) return false;
  out.origin = last;
  out.ns_per_tick = static_cast<double>(last.ns - first.ns) / static_cast<double>(last.tsc - first.tsc);
  std::nth_element(ticks, ticks + kReads / 2, ticks + kReads);
  out.read_ns = static_cast<std::uint64_t>(static_cast<double>(ticks[kReads / 2]) * out.ns_per_tick + 0.5);
  // 100 MHz to 10 GHz: anything else is not a TSC to rely on.
  return out.ns_per_tick > 0.1 && out.ns_per_tick < 10;
}

}  // namespace

void choose_stamp_source() {
  const StampChoice want = g_options.stamp;
  if (want == StampChoice::kCounter) return;
  const char* untrusted = tsc_untrusted();
  TscTiming timing;
  if (untrusted == nullptr && !time_tsc(timing)) untrusted = "the TSC's rate measured at start is implausible";
  if (untrusted != nullptr) {
    if (want == StampChoice::kTsc) {
      log_line({kEnvStamp.name, "=tsc: ", untrusted, "; events are ordered by the shared counter instead"});
    }
    return;
  }
  g_read_cost_ns = timing.read_ns;
  if (want == StampChoice::kAuto && timing.read_ns > kAutoMaxTscReadNs) return;
  tsc_map_start(timing.origin, timing.ns_per_tick);
  g_stamp_tsc.store(true, std::memory_order_relaxed);
}

std::uint64_t tsc_read_cost_ns() { return g_read_cost_ns; }

}  // namespace memrec::preload
