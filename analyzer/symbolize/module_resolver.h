// One libdwfl session over one module's files: resolves addresses in the
// module's own vaddr space to frames. libdwfl handles are not thread-safe, so
// each resolver is used by one thread at a time (ModuleState hands them out).
#pragma once

#include <elfutils/libdwfl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memrec/reader/result.h"
#include "symbolize/dwarf_frames.h"
#include "symbolize/elf_symbols.h"
#include "symbolize/module_source.h"
#include "symbolize/name_cache.h"

namespace memrec::analyzer {

class ModuleResolver {
 public:
  // pre: source.kind != SourceKind::kNone. kIo if libdwfl cannot load the file.
  // `debug_dirs` are searched for the dwz files debug files refer to.
  static Result<std::unique_ptr<ModuleResolver>> open(const ModuleSource& source,
                                                      std::span<const std::string> debug_dirs);
  ~ModuleResolver();
  ModuleResolver(const ModuleResolver&) = delete;
  ModuleResolver& operator=(const ModuleResolver&) = delete;

  // Frames for the return address at `return_offset` (ip - bias); the call
  // before it is what is looked up. Never empty; valid as long as this resolver.
  std::vector<ResolvedFrame> resolve(std::uint64_t return_offset);

 private:
  ModuleResolver(const ModuleSource& source, std::span<const std::string> debug_dirs);

  // libdwfl's find_debuginfo callback: hands over the debug file ModuleSource
  // chose, then defers to the standard search (for dwz's .gnu_debugaltlink).
  static int find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                            const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                            char** debuginfo_file_name);

  const bool use_dwarf_;
  const std::string debug_path_;
  bool debug_served_ = false;
  std::string search_path_;  // libdwfl's debuginfo_path, for its standard search
  char* search_path_ptr_ = nullptr;
  Dwfl_Callbacks callbacks_{};
  Dwfl* dwfl_ = nullptr;
  Dwfl_Module* module_ = nullptr;
  NameCache names_;
  // Made once module_ is known.
  std::unique_ptr<CuIndex> cu_index_;
  std::unique_ptr<ElfSymbols> elf_symbols_;
  std::unique_ptr<DwarfFrames> dwarf_frames_;
};

}  // namespace memrec::analyzer
