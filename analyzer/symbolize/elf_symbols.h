// The ELF symbol-table fallback: the function an address lies in, by
// .symtab (of the file or its debug file) or else .dynsym, for code without
// DWARF. Used by ModuleResolver; the name comes back mangled.
#pragma once

#include <elfutils/libdwfl.h>

namespace memrec::analyzer {

// The raw name of the function symbol containing `address` (module
// addresses), or nullptr. Valid as long as the module's Dwfl.
const char* elf_symbol_at(Dwfl_Module* module, GElf_Addr address);

}  // namespace memrec::analyzer
