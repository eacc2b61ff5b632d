// Folded stacks ("collapsed"), the input of Brendan Gregg's flamegraph.pl,
// inferno-flamegraph and speedscope: `frame;frame;frame VALUE` per line,
// outermost first. Those tools split frames at ';' and the value at the last
// space, so names lose ';' and line breaks here.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "export/export_writers.h"

namespace memrec::analyzer {
namespace {

std::string folded_name(const SiteFrame& frame) {
  std::string name = export_frame_name(frame);
  std::replace_if(
      name.begin(), name.end(), [](char c) { return c == ';' || c == '\n' || c == '\r'; }, '_');
  return name;
}

}  // namespace

std::string export_frame_name(const SiteFrame& frame) { return frame_label(frame); }

std::string process_frame_name(const HeapReport& report) {
  const std::string& exe = report.dump.header.exe_path;
  const std::size_t slash = exe.rfind('/');
  return fmt::format("{} (pid {})", slash == std::string::npos ? exe : exe.substr(slash + 1), report.dump.header.pid);
}

std::string export_collapsed(const std::vector<const HeapReport*>& reports, ExportMetric metric) {
  // Sites of different processes (or whose frames differ only where the
  // names hide it) may fold to one line: sum them, sorted for a stable file.
  std::map<std::string, std::uint64_t> lines;
  for (const HeapReport* r : reports) {
    // Each frame's name once, not once per site through it (cc1plus: 9.6 M).
    std::vector<std::string> names(r->sites.frames.size());
    std::vector<bool> named(r->sites.frames.size(), false);
    std::vector<std::uint32_t> frames;
    for (const CallSite& site : r->sites.sites) {
      const std::uint64_t value = site_value(site, metric);
      if (value == 0) continue;
      std::string stack;
      if (reports.size() > 1) stack = folded_name(SiteFrame{process_frame_name(*r), {}, 0, {}, 0, false});
      frames.assign(site.frames.begin(), site.frames.end());
      // The leaf is the site's label frame: library frames under it are trimmed.
      frames.erase(frames.begin(), frames.begin() + std::min<std::size_t>(site.label_frame, frames.size()));
      for (auto f = frames.rbegin(); f != frames.rend(); ++f) {
        if (!named[*f]) {
          names[*f] = folded_name(r->sites.frames[*f]);
          named[*f] = true;
        }
        if (!stack.empty()) stack += ';';
        stack += names[*f];
      }
      if (stack.empty()) stack = "[no stack]";
      lines[stack] += value;
    }
  }
  std::string out;
  for (const auto& [stack, value] : lines) out += fmt::format("{} {}\n", stack, value);
  return out;
}

}  // namespace memrec::analyzer
