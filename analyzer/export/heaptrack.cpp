// heaptrack's interpreted format (heaptrack 1.4, file format version 3), one
// record per line, numbers in hex, indices 1-based (0: none / the root):
//   v <heaptrack version> <file version>   X <command line>   I <page size> <pages>
//   s <length> <string>                    a string, numbered in order from 1
//   i <ip> <module> [<function> <file> <line>]...   an address, its inline chain
//   t <ip index> <parent trace index>      a stack, as a tree of ips from the root
//   a <size> <trace index>                 an allocation kind, numbered from 0
//   + <allocation index>   - <allocation index>   one allocation, one free
//   R <rss pages>   c <ms since the start>
// heaptrack_print computes the peak and the leaks from the + and - lines, so
// every allocation and matched free of the dump is written in merged order;
// frees whose block the recording never saw are left out, as the report does.
#include "export/heaptrack.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "export/export_writers.h"
#include "model/stack_replay.h"
#include "reports/call_sites.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

// Runs before the replay, so a free still finds its block live in it.
class Recorder final : public OrderedEventSink {
 public:
  Recorder(StackReplay& replay, std::vector<HeaptrackKind>& infos, SpillColumn<HeaptrackEvent>& events)
      : events(events), infos(infos), replay_(replay) {}

  void on_event(const HeapEvent& e, std::uint32_t thread) override {
    if (e.op == HeapOp::kAlloc) {
      if (const LiveBlock* old = replay_.live_block(e.addr))
        events.push_back({info(old->size, old->stack.value), false});
      events.push_back({info(e.size, e.stack.value), true});
    } else if (e.op == HeapOp::kFree) {
      if (const LiveBlock* b = replay_.live_block(e.addr)) events.push_back({info(b->size, b->stack.value), false});
    }
    replay_.on_event(e, thread);
  }

  SpillColumn<HeaptrackEvent>& events;
  std::vector<HeaptrackKind>& infos;

 private:
  std::uint32_t info(std::uint64_t size, std::uint32_t stack) {
    const auto [it, inserted] = ids_.try_emplace({size, stack}, static_cast<std::uint32_t>(infos.size()));
    if (inserted) infos.push_back({size, stack});
    return it->second;
  }

  StackReplay& replay_;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint32_t> ids_;
};

class Writer {
 public:
  Writer(const CallSites& sites, std::ostream& stream) : sites_(sites), stream_(stream) {}
  ~Writer() { flush(); }

  // Hands what is buffered to the stream once it passes a MiB.
  void maybe_flush() {
    if (out.size() >= (1 << 20)) flush();
  }
  void flush() {
    stream_.write(out.data(), static_cast<std::streamsize>(out.size()));
    out.clear();
  }

  // The trace index of a site: its ips from the outermost, each a tree node.
  std::uint32_t trace_of_site(std::uint32_t site) {
    if (const auto it = site_traces_.find(site); it != site_traces_.end()) return it->second;
    const CallSite& s = sites_.sites[site];
    std::vector<std::vector<std::uint32_t>> groups;  // innermost first
    std::vector<std::uint32_t> group;
    for (const std::uint32_t f : s.frames) {
      group.push_back(f);
      if (!sites_.frames[f].inlined) {
        groups.push_back(group);
        group.clear();
      }
    }
    if (!group.empty()) groups.push_back(group);
    std::uint32_t parent = 0;
    for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
      const std::uint32_t ip = ip_of(*g);
      const auto [it, inserted] = traces_.try_emplace({ip, parent}, static_cast<std::uint32_t>(traces_.size() + 1));
      if (inserted) out += fmt::format("t {:x} {:x}\n", ip, parent);
      parent = it->second;
    }
    site_traces_[site] = parent;
    return parent;
  }

  std::string out;

 private:
  std::uint32_t string(const std::string& s) {
    const auto [it, inserted] = strings_.try_emplace(s, static_cast<std::uint32_t>(strings_.size() + 1));
    if (inserted) out += fmt::format("s {:x} {}\n", s.size(), s);
    return it->second;
  }

  std::uint32_t ip_of(const std::vector<std::uint32_t>& group) {
    const auto [it, inserted] = ips_.try_emplace(group, static_cast<std::uint32_t>(ips_.size() + 1));
    if (!inserted) return it->second;
    const SiteFrame& outer = sites_.frames[group.back()];
    std::string line =
        fmt::format("i {:x} {:x}", outer.module_offset, string(outer.module.empty() ? "?" : outer.module));
    for (const std::uint32_t f : group) {
      const SiteFrame& frame = sites_.frames[f];
      // A name without a newline: the reader splits records at line ends.
      std::string name = export_frame_name(frame);
      std::replace(name.begin(), name.end(), '\n', ' ');
      line += fmt::format(" {:x}", string(name));
      if (!frame.file.empty())
        line += fmt::format(" {:x} {:x}", string(frame.file), frame.line);
      else
        break;  // heaptrack reads a function without a file only as the last entry
    }
    out += line + "\n";
    return it->second;
  }

  const CallSites& sites_;
  std::ostream& stream_;
  std::unordered_map<std::string, std::uint32_t> strings_;
  std::map<std::vector<std::uint32_t>, std::uint32_t> ips_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> traces_;
  std::unordered_map<std::uint32_t, std::uint32_t> site_traces_;
};

}  // namespace

Result<HeaptrackExport> load_heaptrack(const std::string& path, const LoadOptions& load, Symbolizer& symbolizer) {
  StackReplay replay(TimeWindow{});
  HeaptrackExport data;
  Recorder recorder(replay, data.kinds, data.events);
  auto streamed = stream_dump(path, load, recorder);
  if (!streamed) return streamed.error();
  if (streamed->stopped) return *streamed->stopped;
  replay.finish();
  data.dump = std::move(streamed->dump);
  data.sites = build_call_sites(data.dump, replay.columns(), symbolizer);
  return data;
}

void write_heaptrack(const HeaptrackExport& data, std::ostream& out) {
  const LoadedDump& dump = data.dump;
  const CallSites& sites = data.sites;
  Writer w(sites, out);
  std::string cmd;
  for (const std::string& arg : dump.header.cmdline) cmd += (cmd.empty() ? "" : " ") + arg;
  std::replace(cmd.begin(), cmd.end(), '\n', ' ');
  const std::uint64_t page = dump.header.page_size != 0 ? dump.header.page_size : 4096;
  w.out = fmt::format("v 10400 3\nX {}\nI {:x} {:x}\n", cmd.empty() ? dump.header.exe_path : cmd, page,
                      dump.rss_max_bytes / page + 1);
  std::vector<std::int64_t> written(data.kinds.size(), -1);  // `a` lines are numbered as written
  std::int64_t next_written = 0;
  for (const HeaptrackEvent& e : data.events) {
    if (written[e.kind] < 0) {
      const HeaptrackKind& kind = data.kinds[e.kind];
      const auto site = sites.site_of_stack.find(kind.stack);
      const std::uint32_t trace = site == sites.site_of_stack.end() ? 0 : w.trace_of_site(site->second);
      w.out += fmt::format("a {:x} {:x}\n", kind.size, trace);
      written[e.kind] = next_written++;
    }
    w.out += fmt::format("{} {:x}\n", e.alloc ? '+' : '-', written[e.kind]);
    w.maybe_flush();
  }
  if (dump.rss_max_bytes != 0) w.out += fmt::format("R {:x}\n", dump.rss_max_bytes / page);
  // The run time, for heaptrack's per-second rates: `c` is ms since the start.
  if (dump.last_time_ns && *dump.last_time_ns > dump.header.start_mono_ns) {
    w.out += fmt::format("c {:x}\n", (*dump.last_time_ns - dump.header.start_mono_ns) / 1000000);
  }
}

}  // namespace memrec::analyzer
