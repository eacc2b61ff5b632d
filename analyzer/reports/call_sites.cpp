// Symbolization runs once per distinct (module, return address) of the
// stacks that matter, in one batch so the symbolizer can spread modules over
// its workers. A frame is interned by what the report shows — function, file,
// line, module, inlined — and by its address only when the function is unknown.
#include "reports/call_sites.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <unordered_set>

#include "model/module_map.h"
#include "reports/runtime_frames.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {
namespace {

bool matters(const StackColumns& c, std::size_t s) {
  return c.allocations[s] != 0 || c.leaked_count[s] != 0 || c.peak_bytes[s] != 0;
}

SymbolizeModule symbolize_module(const ModuleInfo& m) {
  SymbolizeModule out;
  out.path = m.path;
  out.build_id.reserve(m.build_id.size());
  for (const std::byte b : m.build_id) out.build_id.push_back(static_cast<std::uint8_t>(b));
  out.bias = m.bias;
  out.segments = m.segments;
  return out;
}

// The symbols of every address the stacks that matter use, by module index.
class AddressSymbols {
 public:
  static constexpr std::uint32_t kNone = ~0u;

  AddressSymbols(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer) {
    const ModuleMap map(dump.modules);
    std::map<std::size_t, std::vector<std::uint64_t>> ips_by_module;
    // (ip, generation) -> (module, ip): resolved to a symbol index below.
    std::unordered_map<std::size_t, std::unordered_map<std::uint64_t, std::uint32_t>> by_module;
    std::vector<std::pair<IpGen, std::size_t>> placed;
    for (const auto& [id, stack] : dump.stacks) {
      if (id.value >= columns.size() || !matters(columns, id.value)) continue;
      for (const std::uint64_t ip : stack.ips) {
        if (index_.contains({ip, stack.module_gen})) continue;
        const ModuleInfo* m = map.find(ip, stack.module_gen);
        index_[{ip, stack.module_gen}] = kNone;
        if (m == nullptr) continue;
        const std::size_t mi = static_cast<std::size_t>(m - dump.modules.data());
        if (by_module[mi].emplace(ip, kNone).second) ips_by_module[mi].push_back(ip);
        placed.push_back({{ip, stack.module_gen}, mi});
      }
    }
    std::vector<SymbolizeModule> modules;
    modules.reserve(ips_by_module.size());
    for (const auto& [mi, ips] : ips_by_module) modules.push_back(symbolize_module(dump.modules[mi]));
    std::vector<Symbolizer::Request> requests;
    std::size_t k = 0;
    for (auto& [mi, ips] : ips_by_module) requests.push_back({&modules[k++], ips});
    std::vector<std::vector<Symbol>> results = symbolizer.symbolize_all(requests);
    k = 0;
    for (const auto& [mi, ips] : ips_by_module) {
      std::vector<Symbol>& symbols = results[k++];
      for (std::size_t i = 0; i < ips.size() && i < symbols.size(); ++i) {
        by_module[mi][ips[i]] = static_cast<std::uint32_t>(symbols_.size());
        symbols_.push_back(std::move(symbols[i]));
      }
    }
    for (const auto& [key, mi] : placed) index_[key] = by_module[mi][key.ip];
  }

  // The index of the symbol of `ip` in a stack of `module_gen` (kNone outside
  // every module), for symbol().
  std::uint32_t index(std::uint64_t ip, std::uint64_t module_gen) const {
    const auto it = index_.find({ip, module_gen});
    return it == index_.end() ? kNone : it->second;
  }
  const Symbol& symbol(std::uint32_t i) const { return symbols_[i]; }
  // Frees a symbol's strings once its frames are interned.
  void release(std::uint32_t i) { symbols_[i] = Symbol{}; }
  std::size_t size() const { return symbols_.size(); }

 private:
  struct IpGen {
    std::uint64_t ip = 0;
    std::uint64_t gen = 0;
    bool operator==(const IpGen&) const = default;
  };
  struct IpGenHash {
    std::size_t operator()(const IpGen& k) const { return (k.ip * 0x9e3779b97f4a7c15ull) ^ k.gen; }
  };
  std::unordered_map<IpGen, std::uint32_t, IpGenHash> index_;
  std::vector<Symbol> symbols_;
};

class Interner {
 public:
  Interner(CallSites& out, AddressSymbols& symbols) : out_(out), symbols_(symbols), of_symbol_(symbols.size()) {}

  // Appends the frame ids of `ip` (its inline frames, innermost first). A
  // symbol's ids are made once and reused by every stack through it.
  void append_frames(std::uint64_t ip, std::uint64_t module_gen, std::vector<std::uint32_t>& into) {
    const std::uint32_t i = symbols_.index(ip, module_gen);
    if (i == AddressSymbols::kNone) {
      const auto [it, inserted] = unknown_.try_emplace(ip, 0);
      if (inserted) it->second = frame(SiteFrame{{}, {}, 0, {}, ip, false});
      into.push_back(it->second);
      return;
    }
    std::vector<std::uint32_t>& ids = of_symbol_[i];
    if (ids.empty()) {
      const Symbol& sym = symbols_.symbol(i);
      for (const SourceFrame& f : sym.frames) {
        ids.push_back(frame(SiteFrame{f.function, f.file, f.line, sym.module, sym.module_offset, f.inlined}));
      }
      symbols_.release(i);
    }
    into.insert(into.end(), ids.begin(), ids.end());
  }

  CallSite& site(const std::vector<std::uint32_t>& frames) {
    // The set holds indices into out_.sites: the new site is put there first,
    // and taken back if one with the same frames exists.
    out_.sites.emplace_back();
    out_.sites.back().frames = frames;
    const auto [it, inserted] = sites_.insert(out_.sites.size() - 1);
    if (!inserted) out_.sites.pop_back();
    return out_.sites[*it];
  }

 private:
  // Frames are equal by what the report shows, and by address only when the
  // function is unknown. The set holds indices into out_.frames, so a
  // frame's strings are kept once.
  struct FrameHash {
    const std::vector<SiteFrame>* frames;
    std::size_t operator()(std::uint32_t i) const {
      const SiteFrame& f = (*frames)[i];
      std::size_t h = std::hash<std::string>{}(f.function);
      h = h * 31 + std::hash<std::string>{}(f.file);
      h = h * 31 + std::hash<std::string>{}(f.module);
      h = h * 31 + f.line * 2 + (f.inlined ? 1 : 0);
      return f.function.empty() ? h * 31 + f.module_offset : h;
    }
  };
  struct FrameEqual {
    const std::vector<SiteFrame>* frames;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
      const SiteFrame& x = (*frames)[a];
      const SiteFrame& y = (*frames)[b];
      return x.function == y.function && x.file == y.file && x.line == y.line && x.module == y.module &&
             x.inlined == y.inlined && (!x.function.empty() || x.module_offset == y.module_offset);
    }
  };
  struct SiteHash {
    const std::vector<CallSite>* sites;
    std::size_t operator()(std::size_t i) const {
      const std::vector<std::uint32_t>& v = (*sites)[i].frames;
      std::size_t h = v.size();
      for (const std::uint32_t x : v) h = h * 0x9e3779b97f4a7c15ull + x;
      return h;
    }
  };
  struct SiteEqual {
    const std::vector<CallSite>* sites;
    bool operator()(std::size_t a, std::size_t b) const { return (*sites)[a].frames == (*sites)[b].frames; }
  };

  std::uint32_t frame(SiteFrame f) {
    out_.frames.push_back(std::move(f));
    const auto [it, inserted] = frames_.insert(static_cast<std::uint32_t>(out_.frames.size() - 1));
    if (!inserted) out_.frames.pop_back();
    return *it;
  }

  CallSites& out_;
  AddressSymbols& symbols_;
  std::vector<std::vector<std::uint32_t>> of_symbol_;         // by symbol index: its frame ids
  std::unordered_map<std::uint64_t, std::uint32_t> unknown_;  // ip outside every module: its frame id
  std::unordered_set<std::uint32_t, FrameHash, FrameEqual> frames_{64, FrameHash{&out_.frames},
                                                                   FrameEqual{&out_.frames}};
  std::unordered_set<std::size_t, SiteHash, SiteEqual> sites_{64, SiteHash{&out_.sites}, SiteEqual{&out_.sites}};
};

void add_figures(CallSite& site, const StackColumns& c, std::size_t s) {
  site.allocations += c.allocations[s];
  site.allocated_bytes += c.allocated_bytes[s];
  site.temporary += c.temporary[s];
  site.leaked_bytes += c.leaked_bytes[s];
  site.leaked_count += c.leaked_count[s];
  site.peak_bytes += c.peak_bytes[s];
  ++site.stack_ids;
}

void classify(CallSites& out) {
  std::vector<const SiteFrame*> innermost;
  for (CallSite& site : out.sites) {
    innermost.clear();
    for (std::size_t i = 0; i < site.frames.size() && i < kRuntimeFramesLooked; ++i) {
      innermost.push_back(&out.frames[site.frames[i]]);
    }
    if (const auto name = runtime_function(innermost)) {
      site.runtime = true;
      site.runtime_function = std::string(*name);
    }
  }
}

}  // namespace

CallSites build_call_sites(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer) {
  CallSites out;
  AddressSymbols symbols(dump, columns, symbolizer);
  Interner interner(out, symbols);
  std::vector<std::uint32_t> frames;
  for (std::size_t s = 0; s < columns.size(); ++s) {
    if (!matters(columns, s)) continue;
    const auto it = dump.stacks.find(StackId{static_cast<std::uint32_t>(s)});
    // Stack 0 (unwinding failed) or an id never defined: a site without frames.
    if (it == dump.stacks.end()) {
      add_figures(interner.site({}), columns, s);
      continue;
    }
    frames.clear();
    for (const std::uint64_t ip : it->second.ips) interner.append_frames(ip, it->second.module_gen, frames);
    CallSite& site = interner.site(frames);
    out.site_of_stack[static_cast<std::uint32_t>(s)] = static_cast<std::uint32_t>(&site - out.sites.data());
    site.truncated = site.truncated || it->second.truncated;
    add_figures(site, columns, s);
  }
  classify(out);
  return out;
}

std::string frame_label(const SiteFrame& frame) {
  if (!frame.function.empty()) return frame.function;
  if (frame.module.empty()) return fmt::format("{:#x}", frame.module_offset);
  const std::size_t slash = frame.module.rfind('/');
  return fmt::format("{}+{:#x}", slash == std::string::npos ? frame.module : frame.module.substr(slash + 1),
                     frame.module_offset);
}

}  // namespace memrec::analyzer
