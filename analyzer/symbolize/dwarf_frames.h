// The inline chain at one address, from DWARF: the function DIE that covers
// it, every DW_TAG_inlined_subroutine nested in it down to the address, and
// each one's source position (the line table for the innermost, the inlined
// call's DW_AT_call_file/line for the others). Owned by one ModuleResolver.
#pragma once

#include <elfutils/libdw.h>

#include <unordered_map>
#include <vector>

#include "symbolize/name_cache.h"
#include "symbolize/resolved_frame.h"

namespace memrec::analyzer {

class DwarfFrames {
 public:
  explicit DwarfFrames(NameCache& names) : names_(names) {}

  // Frames at `pc` (a call instruction, in the DWARF's addresses) of the CU
  // `cu`, innermost first. Empty if no DIE of the CU covers `pc`; a single
  // frame with an empty function if the line table does but no function does.
  std::vector<ResolvedFrame> frames_at(Dwarf_Die cu, Dwarf_Addr pc);

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
  const std::string* function_name(Dwarf_Die& die);

  NameCache& names_;
  std::unordered_map<Dwarf_Off, std::vector<FunctionRange>> functions_by_cu_;
};

}  // namespace memrec::analyzer
