// A poll costs the stacks that are new to it (symbolized in one batch, as
// build_call_sites does) plus one pass adding every placed stack's figures
// to its site: no stack is walked or symbolized twice, however long the
// service has run. Frames are interned by what the report shows, and by
// address only when the function is unknown, as in call_sites.cpp.
#include "reports/followed_sites.h"

#include <map>

#include <fmt/format.h>

#include "model/module_map.h"
#include "reports/runtime_frames.h"
#include "reports/site_label.h"

namespace memrec::analyzer {
namespace {

bool has_figure(const StackColumns& c, std::size_t s) {
  return c.allocations[s] != 0 || c.leaked_count[s] != 0 || c.peak_bytes[s] != 0;
}

// Equal keys for the frames call_sites.cpp's FrameEqual finds equal.
std::string frame_key(const SiteFrame& f) {
  return fmt::format("{}\n{}\n{}\n{}\n{}\n{}", f.function, f.file, f.line, f.module, f.inlined ? 1 : 0,
                     f.function.empty() ? f.module_offset : 0);
}

}  // namespace

std::size_t FollowedSites::IdsHash::operator()(const std::vector<std::uint32_t>& ids) const {
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ ids.size();
  for (const std::uint32_t id : ids) h = (h ^ id) * 0xff51afd7ed558ccdull + (h >> 29);
  return static_cast<std::size_t>(h);
}

std::uint32_t FollowedSites::frame(SiteFrame f) {
  const auto [it, inserted] = frame_ids_.try_emplace(frame_key(f), static_cast<std::uint32_t>(out_.frames.size()));
  if (inserted) out_.frames.push_back(std::move(f));
  return it->second;
}

// Symbolizes the addresses `unseen` in one batch, by module, and interns their frames.
void FollowedSites::symbolize_new(const LoadedDump& dump, const std::vector<GenIp>& unseen, Symbolizer& symbolizer) {
  const ModuleMap map(dump.modules);
  std::map<std::size_t, std::vector<std::uint64_t>> ips_by_module;
  std::map<std::size_t, std::vector<GenIp>> keys_by_module;
  for (const GenIp& key : unseen) {
    const ModuleInfo* m = map.find(key.second, key.first);
    if (m == nullptr) {
      frames_of_[key] = {frame(SiteFrame{{}, {}, 0, {}, key.second, false})};
      continue;
    }
    const auto mi = static_cast<std::size_t>(m - dump.modules.data());
    ips_by_module[mi].push_back(key.second);
    keys_by_module[mi].push_back(key);
  }
  std::vector<SymbolizeModule> modules;
  modules.reserve(ips_by_module.size());
  std::vector<Symbolizer::Request> requests;
  for (const auto& [mi, ips] : ips_by_module) {
    modules.push_back(symbolize_module(dump.modules[mi]));
    requests.push_back({&modules.back(), ips});
  }
  const std::vector<std::vector<Symbol>> results = symbolizer.symbolize_all(requests);
  std::size_t k = 0;
  for (const auto& [mi, keys] : keys_by_module) {
    const std::vector<Symbol>& symbols = results[k++];
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::vector<std::uint32_t>& ids = frames_of_[keys[i]];
      if (i >= symbols.size()) continue;
      const Symbol& sym = symbols[i];
      for (const SourceFrame& f : sym.frames) {
        ids.push_back(frame(SiteFrame{f.function, f.file, f.line, sym.module, sym.module_offset, f.inlined}));
      }
    }
  }
}

// The site listing frames `ids` (innermost first), made and named if new.
std::uint32_t FollowedSites::site_of(std::vector<std::uint32_t> ids) {
  const auto [it, inserted] = site_ids_.try_emplace(ids, static_cast<std::uint32_t>(out_.sites.size()));
  if (!inserted) return it->second;
  CallSite& site = out_.sites.emplace_back();
  site.frames = SiteFrames(std::move(ids));
  std::vector<const SiteFrame*> innermost;
  for (const std::uint32_t f : site.frames) {
    if (innermost.size() == kRuntimeFramesLooked) break;
    innermost.push_back(&out_.frames[f]);
  }
  if (const auto name = runtime_function(innermost)) {
    site.runtime = true;
    site.runtime_function = std::string(*name);
  }
  site.label_frame = label_position(out_, site.frames);
  labels_.push_back(site_label(out_, site).text);
  return it->second;
}

const CallSites& FollowedSites::update(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer) {
  is_placed_.resize(std::max(is_placed_.size(), columns.size()));
  std::vector<std::size_t> fresh;
  for (std::size_t s = 0; s < columns.size(); ++s) {
    if (!is_placed_[s] && has_figure(columns, s)) fresh.push_back(s);
  }
  std::vector<GenIp> unseen;
  for (const std::size_t s : fresh) {
    const StackTable::Stack* stack = dump.stacks.find(StackId{static_cast<std::uint32_t>(s)});
    if (stack == nullptr) continue;
    dump.stacks.for_each_ip(*stack, [&](std::uint64_t ip) {
      const GenIp key{stack->module_gen, ip};
      if (frames_of_.try_emplace(key).second) unseen.push_back(key);
    });
  }
  if (!unseen.empty()) symbolize_new(dump, unseen, symbolizer);
  for (const std::size_t s : fresh) {
    // Stack 0 (unwinding failed) or an id never defined: a site without frames.
    const StackTable::Stack* stack = dump.stacks.find(StackId{static_cast<std::uint32_t>(s)});
    std::vector<std::uint32_t> ids;
    if (stack != nullptr) {
      dump.stacks.for_each_ip(*stack, [&](std::uint64_t ip) {
        const std::vector<std::uint32_t>& of = frames_of_.at({stack->module_gen, ip});
        ids.insert(ids.end(), of.begin(), of.end());
      });
    }
    const std::uint32_t site = site_of(std::move(ids));
    if (stack != nullptr) {
      out_.site_of_stack[static_cast<std::uint32_t>(s)] = site;
      out_.sites[site].truncated = out_.sites[site].truncated || stack->truncated;
    }
    placed_.emplace_back(static_cast<std::uint32_t>(s), site);
    is_placed_[s] = true;
  }
  for (CallSite& site : out_.sites) {
    site.allocations = site.allocated_bytes = site.temporary = 0;
    site.leaked_bytes = site.leaked_count = site.peak_bytes = 0;
    site.stack_ids = 0;
  }
  for (const auto& [s, i] : placed_) {
    if (s < columns.size() && has_figure(columns, s)) add_stack_figures(out_.sites[i], columns, s);
  }
  return out_;
}

}  // namespace memrec::analyzer
