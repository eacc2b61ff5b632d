// `memrec report` as text: a header per process, the totals, then each
// ranking's top sites with their frames, innermost first.
#include <fmt/format.h>

#include <cmath>

#include "common/size_text.h"
#include "reports/dump_notes.h"
#include "reports/report_output.h"
#include "reports/site_label.h"

namespace memrec::analyzer {
namespace {

std::string bytes(std::uint64_t n) { return size_text(n); }

std::string seconds(std::uint64_t ns) { return fmt::format("{:.3f} s", static_cast<double>(ns) / 1e9); }

const char* ranking_title(SiteRanking r) {
  switch (r) {
    case SiteRanking::kLeaked:
      return "leaked bytes";
    case SiteRanking::kPeak:
      return "bytes live at the peak";
    case SiteRanking::kAllocated:
      return "bytes allocated";
    case SiteRanking::kAllocations:
      return "allocation count";
    case SiteRanking::kTemporary:
      return "temporary allocations";
    case SiteRanking::kRuntimeRetained:
      return "kept by the runtime (not leaks)";
  }
  return "?";
}

std::string site_figure(const CallSite& s, SiteRanking r) {
  switch (r) {
    case SiteRanking::kLeaked:
    case SiteRanking::kRuntimeRetained:
      return fmt::format("{} in {}", bytes(s.leaked_bytes), count_of(s.leaked_count, "block"));
    case SiteRanking::kPeak:
      return bytes(s.peak_bytes);
    case SiteRanking::kAllocated:
      return fmt::format("{} in {}", bytes(s.allocated_bytes), count_of(s.allocations, "allocation"));
    case SiteRanking::kAllocations:
      return fmt::format("{} ({})", count_of(s.allocations, "allocation"), bytes(s.allocated_bytes));
    case SiteRanking::kTemporary:
      return fmt::format("{} temporary of {}", s.temporary, count_of(s.allocations, "allocation"));
  }
  return {};
}

std::string_view base_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string frame_text(const SiteFrame& f) {
  std::string out = frame_label(f);
  if (!f.file.empty()) out += fmt::format(" ({}:{})", f.file, f.line);
  if (f.inlined) out += " [inlined]";
  return out;
}

// The site's label line, then its frames; those folded under the label are
// marked, and a site merged by --group label lists each path after the first.
void append_site_frames(std::string& out, const std::string& pad, const HeapReport& r, const CallSite& s) {
  if (s.frames.empty()) {
    out += fmt::format("{}      <no stack>\n", pad);
    return;
  }
  const SiteLabel label = site_label(r.sites, s);
  const SiteFrame& named = r.sites.frames[s.frames[label.frame]];
  out += fmt::format("{}    {}{}{}{}\n", pad, label.text,
                     named.file.empty() ? std::string() : fmt::format(" ({}:{})", base_name(named.file), named.line),
                     label.via.empty() ? "" : " via ", label.via);
  const auto append_frames = [&](const SiteFrames& frames, std::uint32_t label_frame) {
    std::uint32_t at = 0;
    for (const std::uint32_t f : frames) {
      out += fmt::format("{}      {}{}\n", pad, frame_text(r.sites.frames[f]), at++ < label_frame ? " [library]" : "");
    }
  };
  if (s.paths.empty()) return append_frames(s.frames, label.frame);
  for (std::size_t p = 0; p < s.paths.size(); ++p) {
    out += fmt::format("{}    path {} of {}:\n", pad, p + 1, s.paths.size());
    append_frames(s.paths[p], label_position(r.sites, s.paths[p]));
  }
}

void append_site(std::string& out, const std::string& pad, const HeapReport& r, const CallSite& s, SiteRanking k) {
  out += fmt::format("{}  {}{}\n", pad, site_figure(s, k), s.truncated ? " (stack cut at max depth)" : "");
  append_site_frames(out, pad, r, s);
}

// Who paused and resumed the recording, and the markers, in time order.
void append_instants(std::string& out, std::string_view pad, const HeapReport& r) {
  const std::uint64_t start = r.dump.header.start_mono_ns;
  const auto at = [start](std::uint64_t t) { return seconds(t - std::min(t, start)); };
  if (!r.dump.recording.empty()) {
    out += fmt::format("{}recording:", pad);
    const char* sep = " ";
    for (const reader::RecordingRecord& t : r.dump.recording) {
      out += fmt::format("{}{} at {} ({})", sep, t.on ? "resumed" : "paused", at(t.time_ns),
                         format::source_name(t.source));
      sep = ", ";
    }
    out += "\n";
  }
  if (!r.dump.markers.empty()) {
    out += fmt::format("{}markers:", pad);
    const char* sep = " ";
    for (const reader::MarkerRecord& m : r.dump.markers) {
      out += fmt::format("{}'{}' at {} ({})", sep, m.label, at(m.time_ns), format::source_name(m.source));
      sep = ", ";
    }
    out += "\n";
  }
}

}  // namespace

// One line a non-empty class: its bounds, count, bytes and a bar of '#' scaled to the largest count.
void append_classes(std::string& out, const std::string& pad, const Log2Classes& c,
                    std::string (*bound)(std::uint64_t)) {
  std::uint64_t highest = 0;
  for (const std::uint64_t n : c.count) highest = std::max(highest, n);
  for (unsigned k = 0; k < Log2Classes::kClasses; ++k) {
    if (c.count[k] == 0) continue;
    const std::string range =
        Log2Classes::lowest(k) == Log2Classes::highest(k)
            ? bound(Log2Classes::lowest(k))
            : fmt::format("{} - {}", bound(Log2Classes::lowest(k)), bound(Log2Classes::highest(k) + 1));
    const auto width = static_cast<std::size_t>((c.count[k] * 40 + highest - 1) / highest);
    out += fmt::format("{}  {:>22} {:>12} {:>11}  {}\n", pad, range, c.count[k], bytes(c.bytes[k]),
                       std::string(width, '#'));
  }
}

std::string power_of_two_bytes(std::uint64_t n) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  unsigned u = 0;
  while (n >= 1024 && n % 1024 == 0) {
    n /= 1024;
    ++u;
  }
  return fmt::format("{} {}", n, kUnits[u]);
}

std::string power_of_two_time(std::uint64_t ns) {
  if (ns < 1000) return fmt::format("{} ns", ns);
  if (ns < 1000000) return fmt::format("{:.3g} us", static_cast<double>(ns) / 1e3);
  if (ns < 1000000000) return fmt::format("{:.3g} ms", static_cast<double>(ns) / 1e6);
  return fmt::format("{:.3g} s", static_cast<double>(ns) / 1e9);
}

namespace {

std::string signed_bytes(double n) {
  const auto whole = static_cast<std::uint64_t>(std::llround(std::abs(n)));
  return fmt::format("{}{}", n < 0 ? "-" : "+", bytes(whole));
}

// The sites whose live bytes grew, by score (model/site_growth.h).
void append_growth(std::string& out, const std::string& pad, const HeapReport& r, const GrowthRanking& g,
                   std::size_t top) {
  out +=
      fmt::format("\n{}growth of live bytes from {} to {} (after a warm-up of {}; score = slope x R2 x share grown):\n",
                  pad, seconds(g.from_ns), seconds(g.to_ns), seconds(g.warmup_ns));
  if (g.order.empty()) {
    out += fmt::format("{}  no call site's live bytes grew in that range\n", pad);
    return;
  }
  for (std::size_t n = 0; n < g.order.size() && n < top; ++n) {
    const GrowthFit& f = g.fits[g.order[n]];
    out += fmt::format("{}  {}/min, R2 {:.2f}, grew in {:.0f} % of the range, net {}\n", pad,
                       signed_bytes(f.slope_bytes_per_minute), f.r2, f.grew_share * 100,
                       signed_bytes(static_cast<double>(f.net_bytes)));
    append_site_frames(out, pad, r, r.sites.sites[g.order[n]]);
  }
}

void append_retained(std::string& out, const std::string& pad, const HeapReport& r, const RetentionReport& k,
                     std::size_t top) {
  out += fmt::format("\n{}allocated from {} to {} and still live at {}: {} in {}\n", pad, seconds(k.from_ns),
                     seconds(k.to_ns), seconds(k.at_ns), bytes(k.figures.bytes), count_of(k.figures.count, "block"));
  for (std::size_t n = 0; n < k.order.size() && n < top; ++n) {
    const std::uint32_t s = k.order[n];
    out +=
        fmt::format("{}  {} in {}\n", pad, bytes(k.figures.site_bytes[s]), count_of(k.figures.site_count[s], "block"));
    append_site_frames(out, pad, r, r.sites.sites[s]);
  }
}

}  // namespace

void append_histograms(std::string& out, const std::string& pad, const Histograms& h) {
  out += fmt::format("\n{}allocation sizes (each class up to, not including, its second bound):\n", pad);
  out += fmt::format("{}  {:>22} {:>12} {:>11}\n", pad, "size", "allocations", "bytes");
  append_classes(out, pad, h.sizes, power_of_two_bytes);
  out += fmt::format("\n{}lifetimes of the blocks freed (0 ns: within one tick of the recorder's clock):\n", pad);
  out += fmt::format("{}  {:>22} {:>12} {:>11}\n", pad, "lifetime", "blocks", "bytes");
  append_classes(out, pad, h.lifetimes, power_of_two_time);
  out += fmt::format("{}  {:>22} {:>12} {:>11}\n", pad, "still live at the end", h.unfreed, bytes(h.unfreed_bytes));
}

std::string heap_report_text(const HeapReport& r, std::size_t depth, std::size_t top, ProcessLink link,
                             bool histograms) {
  const std::string pad(2 * depth, ' ');
  const HeapTotals& t = r.totals;
  const reader::FileHeader& h = r.dump.header;
  std::string out;
  out += fmt::format("{}== process {} (parent {}): {}\n", pad, h.pid, h.ppid, h.exe_path);
  out += fmt::format("{}file: {}\n", pad, r.dump.path);
  const reader::DumpFacts& f = r.dump.facts;
  if (r.stopped) {
    out += fmt::format("{}dump: read up to a corrupt frame, the rest is lost: {}\n", pad, r.stopped->message);
  } else if (f.truncated_at) {
    out += fmt::format("{}dump: cut at offset {} ({} lost); events up to {} were read\n", pad, *f.truncated_at,
                       bytes(f.file_bytes - *f.truncated_at), seconds(r.duration_ns));
  } else if (f.ended_by_exec()) {
    out += fmt::format("{}dump: ended by exec of {}\n", pad, *f.exec_path);
  } else if (!f.clean_end) {
    out += fmt::format("{}dump: no End record (the program was killed); every frame was read\n", pad);
  }
  for (const DumpNote& n : dump_notes(r.dump)) out += fmt::format("{}note: {}\n", pad, n.message);
  if (r.window.from_ns != 0 || r.window.to_ns) {
    out += fmt::format("{}window: {} to {}\n", pad, seconds(r.window.from_ns),
                       r.window.to_ns ? seconds(*r.window.to_ns) : std::string("the end"));
  }
  out += fmt::format("{}run time: {}, {}\n", pad, seconds(r.duration_ns), count_of(r.dump.threads.size(), "thread"));
  append_instants(out, pad, r);
  out += fmt::format("{}allocations: {} ({} allocated), frees: {}, temporary: {}\n", pad, t.allocations,
                     bytes(t.allocated_bytes), t.frees, t.temporary);
  if (t.peak_time_ns != 0) {
    out += fmt::format("{}peak heap: {} at {}{}; {} of it kept by the runtime\n", pad, bytes(t.peak_bytes),
                       seconds(t.peak_time_ns - std::min(t.peak_time_ns, h.start_mono_ns)),
                       r.rss_at_peak_bytes ? fmt::format(" (RSS {})", bytes(*r.rss_at_peak_bytes)) : std::string(),
                       bytes(r.peak_runtime_bytes));
  }
  out += fmt::format("{}leaked: {} in {}; kept by the runtime: {} in {}\n", pad, bytes(r.leaked_bytes),
                     count_of(r.leaked_count, "block"), bytes(r.runtime_retained_bytes),
                     count_of(r.runtime_retained_count, "block"));
  if (t.unmatched_frees != 0) {
    // A fork child starts with its parent's heap: those blocks are why.
    out += fmt::format("{}frees of blocks {}: {}\n", pad,
                       link == ProcessLink::kFork ? "inherited from the parent (allocated before the fork)"
                                                  : "allocated before recording",
                       t.unmatched_frees);
  }
  if (t.replaced_blocks != 0) {
    out +=
        fmt::format("{}allocations over a block still live (its free was not recorded): {}\n", pad, t.replaced_blocks);
  }
  if (t.bad_stack_ids != 0) {
    out += fmt::format(
        "{}allocations naming a stack id no dump can define (a corrupt or forged file), counted "
        "without a stack: {}\n",
        pad, t.bad_stack_ids);
  }
  if (histograms) append_histograms(out, pad, t.histograms);
  for (const SiteRanking k : kAllRankings) {
    const std::vector<std::size_t> sites = top_sites(r, k, top);
    if (sites.empty()) continue;
    out += fmt::format("\n{}top call sites by {}:\n", pad, ranking_title(k));
    for (const std::size_t i : sites) append_site(out, pad, r, r.sites.sites[i], k);
  }
  if (r.growth) append_growth(out, pad, r, *r.growth, top);
  if (r.retained) append_retained(out, pad, r, *r.retained, top);
  return out;
}

}  // namespace memrec::analyzer
