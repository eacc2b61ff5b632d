// Decides, once per module, which files its addresses are resolved against and
// how far to trust them; produces the module's warning, if any. Called by
// ModuleState on first use; opens files but keeps none open.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

enum class SourceKind {
  kNone,     // module+offset only: the vDSO, a missing file, a rebuilt file whose code moved
  kSymbols,  // function names from ELF symbol tables, no file:line
  kDwarf,    // DWARF (functions, files, lines, inline frames), ELF symbols where DWARF has no function
};

struct ModuleSource {
  SourceKind kind = SourceKind::kNone;
  std::string elf_path;    // the file libdwfl loads as the module (its symbol tables)
  std::string debug_path;  // a separate file with its DWARF; empty if elf_path has it or there is none
  std::optional<std::string> warning;
};

// The kernel's vDSO has no file: its frames stay module+offset, unwarned.
bool is_vdso(std::string_view path);

ModuleSource locate_module(const SymbolizeModule& module, std::span<const std::string> debug_dirs);

}  // namespace memrec::analyzer
