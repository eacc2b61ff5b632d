#include "reports/symbol_prefetch.h"

#include <map>

#include "model/module_map.h"
#include "reports/call_sites.h"

namespace memrec::analyzer {

namespace {

// Addresses resolved per module: enough to load the parts of its debug
// information that every lookup needs, few enough to leave the rest to the
// report's parallel symbolization.
constexpr std::size_t kAddressesPerModule = 64;
// A dump that loads more modules than this (a dlopen loop at new addresses)
// or has this many addresses in none (JIT code) gets no more head start:
// every new address is checked against every module.
constexpr std::size_t kMaxModules = 256;
constexpr std::size_t kMaxUnmapped = 4096;

}  // namespace

SymbolPrefetch::SymbolPrefetch(Symbolizer& symbolizer) : symbolizer_(symbolizer) {}

SymbolPrefetch::~SymbolPrefetch() { finish(); }

bool SymbolPrefetch::opened(std::uint64_t ip) const {
  for (const ModuleInfo& m : opened_) {
    if (ModuleMap::contains(m, ip)) return true;
  }
  return false;
}

void SymbolPrefetch::add(std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses) {
  try {
    queue(modules, addresses);
  } catch (const std::exception&) {
    // Only a head start is lost (std::bad_alloc): the report's own
    // symbolization resolves every address and reports its errors.
  }
}

void SymbolPrefetch::queue(std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses) {
  if (opened_.size() >= kMaxModules || unmapped_ >= kMaxUnmapped) return;
  const ModuleMap map(modules);
  std::map<const ModuleInfo*, std::vector<std::uint64_t>> fresh;
  for (const StackAddress& a : addresses) {
    if (opened(a.ip)) continue;
    const ModuleInfo* m = map.find(a.ip, a.module_gen);
    if (m == nullptr) {
      ++unmapped_;
      continue;
    }
    std::vector<std::uint64_t>& ips = fresh[m];
    if (ips.size() < kAddressesPerModule) ips.push_back(a.ip);
  }
  for (auto& [m, ips] : fresh) {
    opened_.push_back(*m);
    worker_.push(Batch{symbolize_module(*m), std::move(ips)});
  }
}

void SymbolPrefetch::finish() { worker_.finish(/*drop_pending=*/true); }

void SymbolPrefetch::resolve(Batch& batch) {
  try {
    symbolizer_.prefetch(batch.module, batch.ips);
  } catch (const std::exception&) {
    // Only a head start failed (std::bad_alloc): the report's own
    // symbolization resolves these addresses again and reports its errors.
  }
}

}  // namespace memrec::analyzer
