// Finds the compile unit that covers an address of one module. libdwfl's own
// lookup (dwfl_module_addrdie) reads only .debug_aranges, which clang does not
// emit by default and elfutils 0.188 does not rebuild; the CUs' own address
// ranges fill that gap. Owned by one ModuleResolver.
#pragma once

#include <elfutils/libdwfl.h>

#include <optional>
#include <vector>

namespace memrec::analyzer {

struct CuHit {
  Dwarf_Die cu;
  Dwarf_Addr bias = 0;  // subtract from a module address for a DWARF address
};

class CuIndex {
 public:
  explicit CuIndex(Dwfl_Module* module) : module_(module) {}

  std::optional<CuHit> find(Dwarf_Addr pc);

 private:
  struct Range {
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;  // exclusive
    Dwarf_Die cu;
  };
  void build();

  Dwfl_Module* module_;
  bool built_ = false;
  Dwarf_Addr bias_ = 0;
  std::vector<Range> ranges_;  // by low; built on the first miss of .debug_aranges
};

}  // namespace memrec::analyzer
