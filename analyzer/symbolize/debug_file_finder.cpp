// Debug-file lookup in the layouts GDB and elfutils use (GDB manual,
// "Separate Debug Files"), plus the user's --debug-dir folders. Every
// candidate is checked by build-id, so a stale file of the right name is
// skipped rather than trusted.
#include "symbolize/debug_file_finder.h"

#include <algorithm>
#include <filesystem>

#include "symbolize/elf_file.h"

namespace memrec::analyzer {
namespace {

namespace fs = std::filesystem;

void add_unique(std::vector<std::string>& out, std::string path) {
  if (std::find(out.begin(), out.end(), path) == out.end()) out.push_back(std::move(path));
}

// `dir` joined with an absolute `sub` taken as relative: /usr/lib/debug + /a/b.
std::string under(const std::string& dir, const fs::path& sub) {
  return (fs::path(dir) / sub.relative_path()).lexically_normal().string();
}

}  // namespace

std::vector<std::string> build_id_candidates(std::span<const std::uint8_t> build_id,
                                             std::span<const std::string> debug_dirs) {
  std::vector<std::string> out;
  // Shorter ids cannot be split into the xx/yyyy form; no tool writes them.
  if (build_id.size() < 2) return out;
  const std::string hex = to_hex({build_id.begin(), build_id.end()});
  const std::string rel = hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
  for (const std::string& dir : debug_dirs) {
    add_unique(out, (fs::path(dir) / ".build-id" / rel).lexically_normal().string());
    add_unique(out, (fs::path(dir) / rel).lexically_normal().string());
  }
  add_unique(out, (fs::path(kSystemDebugDir) / ".build-id" / rel).string());
  return out;
}

std::vector<std::string> debuglink_candidates(const std::string& module_path, const std::string& link,
                                              std::span<const std::string> debug_dirs) {
  std::vector<std::string> out;
  // A debuglink is a bare file name; anything else would let a crafted file
  // point the lookup anywhere.
  if (link.empty() || link.find('/') != std::string::npos) return out;
  const fs::path dir = fs::path(module_path).parent_path();
  add_unique(out, (dir / link).string());
  add_unique(out, (dir / ".debug" / link).string());
  for (const std::string& debug_dir : debug_dirs) {
    if (dir.is_absolute()) add_unique(out, (fs::path(under(debug_dir, dir)) / link).string());
    add_unique(out, (fs::path(debug_dir) / link).lexically_normal().string());
  }
  if (dir.is_absolute()) add_unique(out, (fs::path(under(kSystemDebugDir, dir)) / link).string());
  return out;
}

std::vector<std::string> name_candidates(const std::string& module_path, std::span<const std::string> debug_dirs) {
  std::vector<std::string> out;
  const std::string name = fs::path(module_path).filename().string();
  if (name.empty()) return out;
  for (const std::string& dir : debug_dirs) {
    add_unique(out, (fs::path(dir) / name).lexically_normal().string());
    add_unique(out, (fs::path(dir) / (name + ".debug")).lexically_normal().string());
  }
  return out;
}

DebugFiles find_debug_files(const DebugLookup& lookup, std::span<const std::string> debug_dirs) {
  DebugFiles found;
  const auto matches = [&](const ElfFile& f) {
    return lookup.want_build_id.empty() || f.build_id() == lookup.want_build_id;
  };
  const auto try_all = [&](const std::vector<std::string>& paths, bool keep_symbols) {
    for (const std::string& path : paths) {
      auto file = ElfFile::open(path);
      if (!file || !matches(*file)) continue;
      if (file->has_dwarf()) {
        found.dwarf = path;
        return true;
      }
      if (keep_symbols && !found.symbols) found.symbols = path;
    }
    return false;
  };
  if (!lookup.want_build_id.empty() && try_all(build_id_candidates(lookup.want_build_id, debug_dirs), false)) {
    return found;
  }
  if (lookup.debuglink && try_all(debuglink_candidates(lookup.module_path, *lookup.debuglink, debug_dirs), false)) {
    return found;
  }
  try_all(name_candidates(lookup.module_path, debug_dirs), true);
  return found;
}

}  // namespace memrec::analyzer
