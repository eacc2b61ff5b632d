// .debug_aranges first (present in GCC output, and cheapest), then the CU
// DIEs' DW_AT_low_pc/high_pc or DW_AT_ranges, read once for the whole module.
#include "symbolize/cu_index.h"

#include <algorithm>

namespace memrec::analyzer {

void CuIndex::build() {
  built_ = true;
  if (dwfl_module_getdwarf(module_, &bias_) == nullptr) return;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module_, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module_, cu, &bias)) {
    Dwarf_Addr base = 0;
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(cu, off, &base, &low, &high)) > 0;) {
      if (low < high) ranges_.push_back(Range{low, high, *cu});
    }
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.low < b.low; });
}

std::optional<CuHit> CuIndex::find(Dwarf_Addr pc) {
  Dwarf_Addr bias = 0;
  if (Dwarf_Die* cu = dwfl_module_addrdie(module_, pc, &bias)) return CuHit{*cu, bias};
  if (!built_) build();
  const Dwarf_Addr addr = pc - bias_;
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), addr,
                             [](Dwarf_Addr a, const Range& r) { return a < r.low; });
  if (it == ranges_.begin() || addr >= std::prev(it)->high) return std::nullopt;
  return CuHit{std::prev(it)->cu, bias_};
}

}  // namespace memrec::analyzer
