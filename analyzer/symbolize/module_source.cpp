// The trust policy for a module's files (symbolizer.h states it for callers).
// A file whose build-id is the recorded one is the recorded code; a debug file
// with that build-id is as good as the file itself (objcopy --only-keep-debug
// keeps the symbol table and program headers). A rebuilt file is used for
// function names only while its segments are unchanged.
#include "symbolize/module_source.h"

#include <algorithm>

#include <fmt/format.h>

#include "symbolize/debug_file_finder.h"
#include "symbolize/elf_file.h"

namespace memrec::analyzer {
namespace {

bool same_segments(std::span<const format::Segment> a, std::span<const format::Segment> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const format::Segment& x, const format::Segment& y) {
    return x.vaddr == y.vaddr && x.memsz == y.memsz && x.file_offset == y.file_offset && x.flags == y.flags;
  });
}

std::string build_id_text(const std::vector<std::uint8_t>& id) { return id.empty() ? "none" : to_hex(id); }

constexpr const char* kDebugHint =
    "install its debug symbols (Debian: the -dbgsym package) or pass --debug-dir with its debug file";

ModuleSource symbols_only(const std::string& path, std::string warning) {
  return ModuleSource{SourceKind::kSymbols, path, {}, std::move(warning)};
}

}  // namespace

bool is_vdso(std::string_view path) {
  return path == "linux-vdso.so.1" || path == "linux-gate.so.1" || path == "[vdso]" || path == "linux-vdso64.so.1";
}

ModuleSource locate_module(const SymbolizeModule& module, std::span<const std::string> debug_dirs) {
  if (module.path.empty() || is_vdso(module.path)) return {};

  auto disk = ElfFile::open(module.path);
  const std::vector<std::uint8_t> disk_id = disk ? disk->build_id() : std::vector<std::uint8_t>{};
  const bool disk_matches = disk && (module.build_id.empty() || disk_id == module.build_id);
  if (disk_matches && disk->has_dwarf()) return ModuleSource{SourceKind::kDwarf, module.path, {}, std::nullopt};

  // Without a recorded build-id, the file on disk is all we can check against.
  DebugLookup lookup{module.path, module.build_id.empty() ? disk_id : module.build_id, std::nullopt};
  if (disk_matches) lookup.debuglink = disk->debuglink();
  const DebugFiles found = find_debug_files(lookup, debug_dirs);

  if (disk_matches) {
    if (found.dwarf) return ModuleSource{SourceKind::kDwarf, module.path, *found.dwarf, std::nullopt};
    return symbols_only(module.path, fmt::format("{}: no debug info (build-id {}): its functions are named from its "
                                                 "ELF symbol table, without file:line; {}",
                                                 module.path, build_id_text(disk_id), kDebugHint));
  }
  // The recorded build is gone from its path, but a debug file or copy of it
  // was found: it has the symbol table and DWARF of the recorded code.
  if (found.dwarf) return ModuleSource{SourceKind::kDwarf, *found.dwarf, {}, std::nullopt};
  if (found.symbols) {
    return symbols_only(*found.symbols,
                        fmt::format("{}: no debug info (build-id {}): its functions are named from the ELF symbol "
                                    "table of {}, without file:line; {}",
                                    module.path, build_id_text(module.build_id), *found.symbols, kDebugHint));
  }
  if (!disk) {
    return ModuleSource{
        SourceKind::kNone,
        {},
        {},
        fmt::format("{} (recorded build-id {}); its frames show as module+offset: pass --debug-dir with a copy of "
                    "the file or its debug file",
                    disk.error().message, build_id_text(module.build_id))};
  }
  const std::string mismatch =
      fmt::format("{}: the file on disk has build-id {} but the recorded one is {} (rebuilt or upgraded since)",
                  module.path, build_id_text(disk_id), build_id_text(module.build_id));
  if (!module.segments.empty() && same_segments(disk->load_segments(), module.segments)) {
    return symbols_only(module.path, fmt::format("{}; its load segments are unchanged, so its functions are named from "
                                                 "its ELF symbol table, without file:line; pass --debug-dir with the "
                                                 "recorded build's debug file for more",
                                                 mismatch));
  }
  return ModuleSource{SourceKind::kNone,
                      {},
                      {},
                      fmt::format("{}; its code has moved, so its frames show as module+offset; pass --debug-dir with "
                                  "the recorded build's file or debug file",
                                  mismatch)};
}

}  // namespace memrec::analyzer
