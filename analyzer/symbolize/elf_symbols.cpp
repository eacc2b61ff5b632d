// dwfl_module_addrinfo picks the symbol table itself: the file's .symtab, the
// debug file's, MiniDebugInfo (.gnu_debugdata), then .dynsym (libdwfl.h,
// dwfl_module_addrinfo). Only code symbols are taken: an address in a
// stripped static function may otherwise be named after a data symbol.
#include "symbolize/elf_symbols.h"

#include <gelf.h>

namespace memrec::analyzer {

const char* elf_symbol_at(Dwfl_Module* module, GElf_Addr address) {
  GElf_Off offset = 0;
  GElf_Sym sym;
  const char* name = dwfl_module_addrinfo(module, address, &offset, &sym, nullptr, nullptr, nullptr);
  if (name == nullptr || name[0] == '\0') return nullptr;
  const int type = GELF_ST_TYPE(sym.st_info);
  if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) return nullptr;
  // A sized symbol that ends before the address is a neighbour, not ours.
  if (sym.st_size != 0 && offset >= sym.st_size) return nullptr;
  return name;
}

}  // namespace memrec::analyzer
