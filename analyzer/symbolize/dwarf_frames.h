// DWARF lookups for one module, owned by one ModuleResolver. CuIndex finds
// the compile unit covering an address; DwarfFrames finds in it the inline
// chain: the function DIE that covers the address, every
// DW_TAG_inlined_subroutine nested in it down to the address, and each one's
// source position (the line table for the innermost, the inlined call's
// DW_AT_call_file/line for the others).
#pragma once

#include <elfutils/libdwfl.h>

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "symbolize/elf_symbols.h"
#include "symbolize/name_cache.h"
#include "symbolize/resolved_frame.h"

namespace memrec::analyzer {

struct CuHit {
  Dwarf_Die cu;
  Dwarf_Addr bias = 0;  // subtract from a module address for a DWARF address
};

// libdwfl's own CU lookup (dwfl_module_addrdie) reads only .debug_aranges,
// which clang does not emit by default and elfutils 0.188 does not rebuild;
// the CUs' own address ranges fill that gap.
class CuIndex {
 public:
  explicit CuIndex(Dwfl_Module* module) : module_(module) {}

  // The CU covering module address `pc`, or nullopt (code without DWARF).
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

class DwarfFrames {
 public:
  DwarfFrames(NameCache& names, ElfSymbols& symbols) : names_(names), symbols_(symbols) {}

  // Frames at a call instruction of the CU `cu` (`pc` in the DWARF's
  // addresses, `module_pc` in the module's), innermost first. Empty if no DIE
  // of the CU covers it; a single frame with an empty function if the line
  // table does but no function does.
  std::vector<ResolvedFrame> frames_at(Dwarf_Die cu, Dwarf_Addr pc, Dwarf_Addr module_pc);

 private:
  struct FunctionRange {
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;  // exclusive
    Dwarf_Die die;
  };

  // The CU's concrete functions by address, built on the CU's first lookup:
  // one walk over its top-level DIEs instead of one per address, which is
  // what dwarf_getscopes would cost.
  const std::vector<FunctionRange>& functions_of(Dwarf_Die& cu);
  struct Name {
    const std::string* text = nullptr;
    bool qualified = false;  // from a linkage name: namespaces, classes, parameters
  };
  Name function_name(Dwarf_Die& die);
  // `file` (from libdw, so stable) made absolute against the CU's build folder.
  const char* full_path(Dwarf_Die& cu, const char* file);

  NameCache& names_;
  ElfSymbols& symbols_;
  std::unordered_map<Dwarf_Off, std::vector<FunctionRange>> functions_by_cu_;
  std::unordered_map<const char*, std::string> full_paths_;  // node-based: c_str() stays put
};

}  // namespace memrec::analyzer
