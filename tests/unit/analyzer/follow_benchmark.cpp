// Follows one dump while a program under the preload writes it, as memrec
// view --follow will: a step every --interval-ms, a report after each step.
// Prints one JSON line: the steps' and the reports' CPU time, the events
// followed, the peak RSS; with --table, also the allocation table's (grown
// and published after each step, as view --follow does); with --check, also
// whether the final report equals `memrec report --json` of the finished
// file, and the table that file's table in every window (exit 1 if not).
// tests/integration/test_follow.py runs it against live recordings.
// With --feed FINISHED, it writes DUMP itself, FINISHED's bytes a
// --feed-bytes chunk per step with no wait, and with --window-events N
// also prints, for each N events followed, the steps' and reports' CPU
// time and the peak RSS over those events alone (VmHWM, reset through
// /proc/self/clear_refs) and the disk its spilled events hold: what a
// poll costs early and late in a long recording (docs/design/follow.md).
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/window_figures.h"
#include "reports/followed_report.h"
#include "reports/report_output.h"
#include "symbolize/symbolizer.h"

using namespace memrec::analyzer;
using nlohmann::json;

namespace {

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// VmHWM of /proc/self/status in KiB, and a reset of it for the next window.
long peak_rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return 0;
}
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// The disk blocks of this process's unlinked files (the held-back events'
// spill, load/event_spill.h), in KiB.
long unlinked_disk_kib() {
  long kib = 0;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    struct stat st {};
    if (target.ends_with(" (deleted)") && ::stat(fd.path().c_str(), &st) == 0) kib += st.st_blocks / 2;
  }
  return kib;
}

// Appends the next `n` bytes of `from` to the file at `path`; false at its end.
bool feed(std::ifstream& from, const std::string& path, std::size_t n) {
  std::vector<char> chunk(n);
  from.read(chunk.data(), static_cast<std::streamsize>(n));
  const auto got = static_cast<std::size_t>(from.gcount());
  std::ofstream(path, std::ios::binary | std::ios::app).write(chunk.data(), static_cast<std::streamsize>(got));
  return got == n;
}

long max_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

// The report --json document without max_pending_events, which says how the
// events were read (dump_follower.h), not what they were.
json document(const HeapReport& report) {
  std::ostringstream out;
  write_report_json(out, {report}, {ProcessNode{}}, 20, {});
  json doc = json::parse(out.str());
  for (json& process : doc.at("processes")) process.at("report").at("dump").erase("max_pending_events");
  return doc;
}

// Every window of a 16 x 16 grid over the run: its totals and the heap at its end.
json windows(const AllocationTable& t, std::uint64_t start_ns, std::uint64_t duration_ns) {
  json out = json::array();
  const std::uint64_t step = std::max<std::uint64_t>(1, duration_ns / 16);
  for (std::uint64_t from = start_ns; from <= start_ns + duration_ns; from += step) {
    for (std::uint64_t to = from; to <= start_ns + duration_ns; to += step) {
      const WindowFigures f = window_figures(t, TimeWindow{from, to});
      const EventCursor at = cursor_at(t, to);
      out.push_back({f.totals.allocations, f.totals.frees, f.totals.allocated_bytes, f.totals.peak_bytes,
                     f.totals.leaked_bytes, f.totals.temporary, at.heap_bytes, at.live_count});
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr
        << "usage: follow_benchmark DUMP [--interval-ms N] [--timeout-s N] [--hold-back-ms N] [--table] [--check]\n"
           "                       [--feed FINISHED [--feed-bytes N]] [--window-events N]\n";
    return 2;
  }
  const std::string path = argv[1];
  long interval_ms = 200;
  long timeout_s = 120;
  bool check = false;
  bool with_table = false;
  std::string feed_from;
  std::size_t feed_bytes = 1 << 20;
  std::uint64_t window_events = 0;
  FollowOptions options;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--interval-ms") == 0 && i + 1 < argc) {
      interval_ms = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--timeout-s") == 0 && i + 1 < argc) {
      timeout_s = std::atol(argv[++i]);
    } else if (std::strcmp(argv[i], "--hold-back-ms") == 0 && i + 1 < argc) {
      options.hold_back_ns = static_cast<std::uint64_t>(std::atol(argv[++i])) * 1'000'000;
    } else if (std::strcmp(argv[i], "--table") == 0) {
      with_table = true;
    } else if (std::strcmp(argv[i], "--feed") == 0 && i + 1 < argc) {
      feed_from = argv[++i];
    } else if (std::strcmp(argv[i], "--feed-bytes") == 0 && i + 1 < argc) {
      feed_bytes = static_cast<std::size_t>(std::atol(argv[++i]));
    } else if (std::strcmp(argv[i], "--window-events") == 0 && i + 1 < argc) {
      window_events = static_cast<std::uint64_t>(std::atoll(argv[++i]));
    } else if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else {
      std::cerr << "follow_benchmark: unknown argument " << argv[i] << "\n";
      return 2;
    }
  }
  std::ifstream feeding;
  if (!feed_from.empty()) {
    feeding.open(feed_from, std::ios::binary);
    if (!feeding || feed_bytes == 0) {
      std::cerr << "follow_benchmark: cannot read " << feed_from << " (or --feed-bytes is 0)\n";
      return 2;
    }
    std::ofstream(path, std::ios::binary | std::ios::trunc);
    interval_ms = 0;
  }
  Symbolizer symbolizer(SymbolizerOptions{});
  FollowedReport followed(path, options, with_table);
  std::shared_ptr<AllocationTable> table;
  double table_cpu = 0;
  json window_rows = json::array();
  std::uint64_t window_start = 0;
  double window_cpu = 0;
  reset_peak_rss();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  const long rss_before = max_rss_kib();
  double step_cpu = 0;
  double report_cpu = 0;
  std::size_t steps = 0;
  std::size_t growing_reports = 0;  // reports whose allocations grew since the one before
  std::uint64_t allocations = 0;
  for (;;) {
    if (feeding.is_open()) feed(feeding, path, feed_bytes);
    const double t0 = cpu_seconds();
    const auto step = followed.step();
    const double t1 = cpu_seconds();
    step_cpu += t1 - t0;
    if (step.ok()) {
      ++steps;
      if (step->error) {
        std::cerr << "follow_benchmark: " << step->error->message << "\n";
        return 1;
      }
      const HeapReport now = followed.report(symbolizer);
      const double t2 = cpu_seconds();
      report_cpu += t2 - t1;
      if (with_table) {
        table = followed.publish_table();
        if (table != nullptr) {
          table->set_sites(now.sites.site_of_stack, static_cast<std::uint32_t>(now.sites.sites.size()));
        }
        table_cpu += cpu_seconds() - t2;
      }
      window_cpu += t2 - t0;
      const std::uint64_t events = followed.follower().stats().events;
      if (window_events > 0 && (events - window_start >= window_events || followed.follower().finished())) {
        const double millions = static_cast<double>(events - window_start) / 1e6;
        window_rows.push_back({{"events_before", window_start},
                               {"events", events - window_start},
                               {"cpu_s_per_million", millions > 0 ? window_cpu / millions : 0.0},
                               {"peak_rss_kib", peak_rss_kib()},
                               {"spill_disk_kib", unlinked_disk_kib()},
                               {"sites", now.sites.sites.size()}});
        window_start = events;
        window_cpu = 0;
        reset_peak_rss();
      }
      if (now.totals.allocations > allocations) ++growing_reports;
      allocations = now.totals.allocations;
      if (followed.follower().finished()) break;
    }
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "follow_benchmark: " << path << " did not end within " << timeout_s << " s\n";
      return 1;
    }
    if (interval_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
  }
  const StreamedDump& stats = followed.follower().stats();
  const double millions = static_cast<double>(stats.events) / 1e6;
  json out = {{"steps", steps},
              {"growing_reports", growing_reports},
              {"restarts", followed.restarts()},
              {"events", stats.events},
              {"frames", stats.dump.facts.frames},
              {"step_cpu_s", step_cpu},
              {"report_cpu_s", report_cpu},
              {"step_cpu_s_per_million", millions > 0 ? step_cpu / millions : 0.0},
              {"max_rss_kib", max_rss_kib()},
              {"rss_growth_kib", max_rss_kib() - rss_before}};
  if (with_table) {
    out["table_cpu_s"] = table_cpu;
    out["table_cpu_s_per_million"] = millions > 0 ? table_cpu / millions : 0.0;
    out["table_bytes"] = table != nullptr ? table->memory_bytes() : 0;
    out["table_bytes_per_million"] =
        table != nullptr && millions > 0 ? static_cast<double>(table->memory_bytes()) / millions : 0.0;
  }
  if (window_events > 0) out["windows"] = window_rows;
  int status = 0;
  if (check) {
    AllocationTableBuilder whole_table;
    const auto whole =
        build_heap_report(path, {}, LoadOptions{}, symbolizer, nullptr, with_table ? &whole_table : nullptr);
    if (!whole) {
      std::cerr << "follow_benchmark: " << whole.error().message << "\n";
      return 1;
    }
    const bool same = document(followed.report(symbolizer)) == document(*whole);
    out["same_report"] = same;
    if (!same) status = 1;
    if (with_table) {
      AllocationTable t = whole_table.finish();
      t.set_sites(whole->sites.site_of_stack, static_cast<std::uint32_t>(whole->sites.sites.size()));
      const std::uint64_t start = whole->dump.header.start_mono_ns;
      const bool same_table = table != nullptr && table->rows() == t.rows() && table->frees() == t.frees() &&
                              windows(*table, start, whole->duration_ns) == windows(t, start, whole->duration_ns);
      out["same_table"] = same_table;
      if (!same_table) status = 1;
    }
  }
  std::cout << out.dump() << std::endl;
  return status;
}
