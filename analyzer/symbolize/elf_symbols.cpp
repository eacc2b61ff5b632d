// An address-sorted copy of the module's function symbols, built on the first
// lookup. dwfl_module_addrinfo would do, but it scans the whole table on every
// call (libdwfl/dwfl_module_addrsym.c): 270 µs per address in libstdc++.
#include "symbolize/elf_symbols.h"

#include <gelf.h>

#include <algorithm>

namespace memrec::analyzer {
namespace {

// Several names at one address (aliases): prefer a global, sized one, the
// name callers link against, as libdwfl does.
int rank_of(const GElf_Sym& sym) {
  const int binding = GELF_ST_BIND(sym.st_info);
  const int by_binding = binding == STB_GLOBAL ? 2 : binding == STB_WEAK ? 1 : 0;
  return by_binding * 2 + (sym.st_size != 0 ? 1 : 0);
}

// How far back to look for a symbol that contains a smaller one.
constexpr int kMaxEnclosingLookback = 8;

}  // namespace

void ElfSymbols::load() {
  loaded_ = true;
  const int count = dwfl_module_getsymtab(module_);
  for (int i = 0; i < count; ++i) {
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    const char* name = dwfl_module_getsym_info(module_, i, &sym, &addr, &shndx, nullptr, nullptr);
    if (name == nullptr || name[0] == '\0' || sym.st_shndx == SHN_UNDEF) continue;
    const int type = GELF_ST_TYPE(sym.st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    entries_.push_back(Entry{addr, addr + sym.st_size, name, rank_of(sym)});
  }
  std::sort(entries_.begin(), entries_.end(),
            [](const Entry& a, const Entry& b) { return a.start != b.start ? a.start < b.start : a.rank > b.rank; });
  entries_.erase(
      std::unique(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.start == b.start; }),
      entries_.end());
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i].end == entries_[i].start) {
      entries_[i].end = i + 1 < entries_.size() ? entries_[i + 1].start : entries_[i].start + 1;
    }
  }
}

const char* ElfSymbols::at(GElf_Addr address) {
  if (!loaded_) load();
  auto it = std::upper_bound(entries_.begin(), entries_.end(), address,
                             [](GElf_Addr a, const Entry& e) { return a < e.start; });
  // The nearest symbol before may be a small one inside a larger function
  // that ends past it (a local label typed FUNC): look a little further back.
  for (int step = 0; it != entries_.begin() && step < kMaxEnclosingLookback; ++step) {
    --it;
    if (address < it->end) return it->name;
  }
  return nullptr;
}

}  // namespace memrec::analyzer
