// `memrec export --format massif`: valgrind's massif.out (the format ms_print
// and massif-visualizer read; valgrind's massif/ms_print.in is its reader):
//
//   desc: ...  cmd: ...  time_unit: ms
//   #-----------  snapshot=N  #-----------
//   time=T  mem_heap_B=B  mem_heap_extra_B=0  mem_stacks_B=0
//   heap_tree=empty | peak
//   n<children>: <bytes> <description>       one node per line, children
//    n<children>: <bytes> 0xADDR: fn (file:line)   indented one space deeper
//
// Snapshots are the buckets of the heap timeline that `memrec view` draws
// (model/heap_timeline.h) that saw events within the window, at most
// 100, plus one at the peak, whose tree splits the peak's bytes by call site,
// innermost frame first as massif does.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "export/export_writers.h"

namespace memrec::analyzer {
namespace {

constexpr std::size_t kMaxSnapshots = 100;

// The sites (index, peak bytes) under a tree node, `depth` frames deep.
struct Branch {
  std::vector<std::size_t> sites;
  std::uint64_t bytes = 0;
};

std::string node_text(const SiteFrame& f) {
  std::string out = fmt::format("0x{:X}: {}", f.module_offset, export_frame_name(f));
  if (!f.file.empty()) {
    const std::size_t slash = f.file.rfind('/');
    out += fmt::format(" ({}:{})", slash == std::string::npos ? f.file : f.file.substr(slash + 1), f.line);
  } else if (!f.module.empty()) {
    out += fmt::format(" (in {})", f.module);
  }
  return out;
}

// `frames`: by site, its frame ids (innermost first), listed once for the
// whole tree rather than walked per depth.
void write_tree(const CallSites& cs, const std::vector<std::vector<std::uint32_t>>& frames,
                const std::vector<std::size_t>& sites, std::size_t depth, std::string& out) {
  // Children: by the frame at `depth`; sites whose stack ends here stay in this node.
  std::map<std::uint32_t, Branch> children;
  for (const std::size_t i : sites) {
    if (depth >= frames[i].size()) continue;
    Branch& b = children[frames[i][depth]];
    b.sites.push_back(i);
    b.bytes += cs.sites[i].peak_bytes;
  }
  std::vector<std::pair<std::uint32_t, const Branch*>> order;
  for (const auto& [frame, branch] : children) order.emplace_back(frame, &branch);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return a.second->bytes > b.second->bytes; });
  for (const auto& [frame, branch] : order) {
    std::size_t grandchildren = 0;
    std::map<std::uint32_t, bool> seen;
    for (const std::size_t i : branch->sites) {
      if (depth + 1 < frames[i].size()) seen[frames[i][depth + 1]] = true;
    }
    grandchildren = seen.size();
    out += fmt::format("{}n{}: {} {}\n", std::string(depth + 1, ' '), grandchildren, branch->bytes,
                       node_text(cs.frames[frame]));
    write_tree(cs, frames, branch->sites, depth + 1, out);
  }
}

std::string peak_tree(const HeapReport& r) {
  std::vector<std::size_t> sites;
  std::vector<std::vector<std::uint32_t>> frames(r.sites.sites.size());
  std::map<std::uint32_t, bool> roots;
  std::uint64_t total = 0;
  for (std::size_t i = 0; i < r.sites.sites.size(); ++i) {
    const CallSite& s = r.sites.sites[i];
    if (s.peak_bytes == 0) continue;
    total += s.peak_bytes;
    if (s.frames.empty()) continue;  // no stack: counted in the root only
    sites.push_back(i);
    frames[i] = s.frames.to_vector();
    // Below massif's "heap allocation functions" root, each stack starts at
    // its site's label frame, as valgrind's does at the caller of malloc.
    frames[i].erase(frames[i].begin(), frames[i].begin() + std::min<std::size_t>(s.label_frame, frames[i].size() - 1));
    roots[frames[i][0]] = true;
  }
  std::string out =
      fmt::format("n{}: {} (heap allocation functions) malloc/new/new[], --alloc-fns, etc.\n", roots.size(), total);
  write_tree(r.sites, frames, sites, 0, out);
  return out;
}

// Milliseconds with the nanoseconds as decimals (`12.3456`, `300`): massif's
// time units are only i, ms and B, so a finer one is not an option, but both
// readers take a fraction (ms_print uses the value as a number,
// massif-visualizer parses it with QByteArray::toDouble), and whole ms would
// fold every snapshot of a short run onto a few instants.
std::string ms_text(std::uint64_t ns) {
  std::string out = fmt::format("{}", ns / 1000000);
  if (const std::uint64_t frac = ns % 1000000; frac != 0) {
    std::string digits = fmt::format("{:06}", frac);
    digits.erase(digits.find_last_not_of('0') + 1);
    out += "." + digits;
  }
  return out;
}

}  // namespace

std::string export_massif(const HeapReport& r, const HeapTimeline& timeline) {
  const std::uint64_t start = r.dump.header.start_mono_ns;
  std::string cmd;
  for (const std::string& arg : r.dump.header.cmdline) cmd += (cmd.empty() ? "" : " ") + arg;
  if (cmd.empty()) cmd = r.dump.header.exe_path;
  std::replace(cmd.begin(), cmd.end(), '\n', ' ');
  std::string out = fmt::format("desc: memrec export of {}\ncmd: {}\ntime_unit: ms\n", r.dump.path, cmd);

  // (time, bytes, is_peak), in time order; the peak goes where it happened.
  struct Snapshot {
    std::uint64_t time_ns;
    std::uint64_t bytes;
    bool peak;
  };
  // Buckets with events, within the window; at most kMaxSnapshots of them,
  // evenly picked (the last one always), like massif's own default of 100.
  const std::uint64_t from = start + r.window.from_ns;
  const std::uint64_t to = r.window.to_ns ? start + *r.window.to_ns : ~0ull;
  const std::vector<TimelineBucket> buckets = timeline.buckets();
  std::vector<Snapshot> timed;
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    // A bucket's heap is the one after its last event: show it at its end.
    const std::uint64_t t = timeline.start_ns() + (i + 1) * timeline.bucket_ns();
    if (!buckets[i].has_events || t < from || t - timeline.bucket_ns() > to) continue;
    timed.push_back({t, buckets[i].heap_bytes, false});
  }
  std::vector<Snapshot> snapshots{{0, 0, false}};
  bool peak_placed = r.totals.peak_time_ns == 0;
  const std::size_t step = timed.size() / kMaxSnapshots + 1;
  for (std::size_t i = 0; i < timed.size(); ++i) {
    if (i % step != 0 && i + 1 != timed.size()) continue;
    if (!peak_placed && timed[i].time_ns >= r.totals.peak_time_ns) {
      snapshots.push_back({r.totals.peak_time_ns, r.totals.peak_bytes, true});
      peak_placed = true;
    }
    snapshots.push_back(timed[i]);
  }
  if (!peak_placed) snapshots.push_back({r.totals.peak_time_ns, r.totals.peak_bytes, true});

  for (std::size_t n = 0; n < snapshots.size(); ++n) {
    const Snapshot& s = snapshots[n];
    const std::uint64_t rel = s.time_ns > start ? s.time_ns - start : 0;
    out += fmt::format(
        "#-----------\nsnapshot={}\n#-----------\ntime={}\nmem_heap_B={}\nmem_heap_extra_B=0\nmem_stacks_B=0\n", n,
        ms_text(rel), s.bytes);
    out += s.peak ? "heap_tree=peak\n" + peak_tree(r) : "heap_tree=empty\n";
  }
  return out;
}

}  // namespace memrec::analyzer
