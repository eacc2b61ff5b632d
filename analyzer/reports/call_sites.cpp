// Symbolization runs once per distinct (module, return address) of the
// stacks that matter, in one batch so the symbolizer can spread modules over
// its workers. A frame is interned by what the report shows — function, file,
// line, module, inlined — and by its address only when the function is unknown.
#include "reports/call_sites.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>

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
  AddressSymbols(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer) : dump_(dump) {
    const ModuleMap map(dump.modules);
    std::map<std::size_t, std::vector<std::uint64_t>> ips_by_module;
    for (const auto& [id, stack] : dump.stacks) {
      if (id.value >= columns.size() || !matters(columns, id.value)) continue;
      for (const std::uint64_t ip : stack.ips) {
        const ModuleInfo* m = map.find(ip, stack.module_gen);
        if (m == nullptr) continue;
        const std::size_t mi = static_cast<std::size_t>(m - dump.modules.data());
        if (by_module_[mi].emplace(ip, 0).second) ips_by_module[mi].push_back(ip);
        module_of_[{ip, stack.module_gen}] = mi;
      }
    }
    std::vector<SymbolizeModule> modules;
    modules.reserve(ips_by_module.size());
    for (const auto& [mi, ips] : ips_by_module) modules.push_back(symbolize_module(dump.modules[mi]));
    std::vector<Symbolizer::Request> requests;
    std::size_t k = 0;
    for (auto& [mi, ips] : ips_by_module) requests.push_back({&modules[k++], ips});
    const std::vector<std::vector<Symbol>> results = symbolizer.symbolize_all(requests);
    k = 0;
    for (const auto& [mi, ips] : ips_by_module) {
      const std::vector<Symbol>& symbols = results[k++];
      for (std::size_t i = 0; i < ips.size() && i < symbols.size(); ++i) {
        by_module_[mi][ips[i]] = symbols_.size();
        symbols_.push_back(symbols[i]);
      }
    }
  }

  // The symbol of `ip` in a stack of `module_gen`, or nullptr outside every module.
  const Symbol* find(std::uint64_t ip, std::uint64_t module_gen) const {
    const auto m = module_of_.find({ip, module_gen});
    if (m == module_of_.end()) return nullptr;
    const auto& ips = by_module_.at(m->second);
    const auto s = ips.find(ip);
    return s == ips.end() || s->second >= symbols_.size() ? nullptr : &symbols_[s->second];
  }

 private:
  const LoadedDump& dump_;
  std::unordered_map<std::size_t, std::unordered_map<std::uint64_t, std::size_t>> by_module_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, std::size_t> module_of_;
  std::vector<Symbol> symbols_;
};

class Interner {
 public:
  explicit Interner(CallSites& out) : out_(out) {}

  std::uint32_t frame(SiteFrame f) {
    std::string key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}", f.function, f.file, f.line, f.module, f.inlined);
    if (f.function.empty()) key += fmt::format("\x1f{:x}", f.module_offset);
    const auto [it, inserted] = frames_.try_emplace(std::move(key), out_.frames.size());
    if (inserted) out_.frames.push_back(std::move(f));
    return it->second;
  }

  CallSite& site(const std::vector<std::uint32_t>& frames) {
    const auto [it, inserted] = sites_.try_emplace(frames, out_.sites.size());
    if (inserted) {
      out_.sites.emplace_back();
      out_.sites.back().frames = frames;
    }
    return out_.sites[it->second];
  }

 private:
  struct Hash {
    std::size_t operator()(const std::vector<std::uint32_t>& v) const {
      std::size_t h = v.size();
      for (const std::uint32_t x : v) h = h * 0x9e3779b97f4a7c15ull + x;
      return h;
    }
  };
  CallSites& out_;
  std::unordered_map<std::string, std::uint32_t> frames_;
  std::unordered_map<std::vector<std::uint32_t>, std::size_t, Hash> sites_;
};

std::vector<std::uint32_t> site_frames(const StackInfo& stack, const AddressSymbols& symbols, Interner& interner) {
  std::vector<std::uint32_t> frames;
  for (const std::uint64_t ip : stack.ips) {
    const Symbol* sym = symbols.find(ip, stack.module_gen);
    if (sym == nullptr) {
      frames.push_back(interner.frame(SiteFrame{{}, {}, 0, {}, ip, false}));
      continue;
    }
    for (const SourceFrame& f : sym->frames) {
      frames.push_back(
          interner.frame(SiteFrame{f.function, f.file, f.line, sym->module, sym->module_offset, f.inlined}));
    }
  }
  return frames;
}

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
  const AddressSymbols symbols(dump, columns, symbolizer);
  Interner interner(out);
  for (std::size_t s = 0; s < columns.size(); ++s) {
    if (!matters(columns, s)) continue;
    const auto it = dump.stacks.find(StackId{static_cast<std::uint32_t>(s)});
    // Stack 0 (unwinding failed) or an id never defined: a site without frames.
    if (it == dump.stacks.end()) {
      add_figures(interner.site({}), columns, s);
      continue;
    }
    CallSite& site = interner.site(site_frames(it->second, symbols, interner));
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
