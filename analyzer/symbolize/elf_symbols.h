// The ELF symbol-table fallback: the function an address lies in, by the
// symbol table libdwfl picked for the module (.symtab of the file or its
// debug file, MiniDebugInfo, else .dynsym), for code without DWARF. Owned by
// one ModuleResolver; names come back mangled.
#pragma once

#include <elfutils/libdwfl.h>

#include <vector>

namespace memrec::analyzer {

class ElfSymbols {
 public:
  explicit ElfSymbols(Dwfl_Module* module) : module_(module) {}

  // The raw name of the function symbol containing `address` (module
  // addresses), or nullptr. Valid as long as the module's Dwfl.
  const char* at(GElf_Addr address);

 private:
  struct Entry {
    GElf_Addr start = 0;
    GElf_Addr end = 0;  // exclusive; a sizeless symbol ends where the next one starts
    const char* name = nullptr;
    int rank = 0;  // among symbols at one address, the highest is kept
  };
  void load();

  Dwfl_Module* module_;
  bool loaded_ = false;
  std::vector<Entry> entries_;  // by start, one per address
};

}  // namespace memrec::analyzer
