// A linear scan: dumps hold tens to hundreds of modules, and only the stacks
// a report prints are resolved.
#include "model/module_map.h"

namespace memrec::analyzer {

bool ModuleMap::loaded_at(const ModuleInfo& m, std::uint64_t gen) {
  return m.load_gen <= gen && (!m.unload_gen || gen < *m.unload_gen);
}

bool ModuleMap::contains(const ModuleInfo& m, std::uint64_t ip) {
  // A return address follows its call; the call itself (ip - 1) is what must
  // lie inside, or a call that ends a segment would land in the next one.
  const std::uint64_t call = ip == 0 ? 0 : ip - 1;
  for (const format::Segment& seg : m.segments) {
    // Wrapping arithmetic: hostile vaddr + bias cannot make this misfire.
    const std::uint64_t start = m.bias + seg.vaddr;
    if (call - start < seg.memsz) return true;
  }
  return false;
}

const ModuleInfo* ModuleMap::find(std::uint64_t ip, std::uint64_t module_gen) const {
  for (const std::uint64_t gen : {module_gen, module_gen + 1}) {
    for (const ModuleInfo& m : modules_) {
      if (loaded_at(m, gen) && contains(m, ip)) return &m;
    }
  }
  for (const ModuleInfo& m : modules_) {
    if (contains(m, ip)) return &m;
  }
  return nullptr;
}

}  // namespace memrec::analyzer
