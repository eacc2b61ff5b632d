// The module is reported to libdwfl at bias 0, so libdwfl's addresses are the
// ELF's own vaddrs and a recorded ip maps to ip - bias (libdwfl.h,
// dwfl_report_elf: ET_EXEC ignores the base; an ET_DYN with add_p_vaddr is
// placed at base + p_vaddr, which matters when its p_vaddr is not 0).
#include "symbolize/module_resolver.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "symbolize/debug_file_finder.h"
#include "symbolize/elf_symbols.h"

namespace memrec::analyzer {

namespace {

// libdwfl's path syntax (libdwfl.h, "Standard callbacks"): "-" turns CRC
// checks off (build-ids are checked instead), absolute elements are searched
// by build-id, relative ones are taken from the module's folder.
std::string dwfl_search_path(std::span<const std::string> debug_dirs) {
  std::string path = "-:.debug";
  for (const std::string& dir : debug_dirs) {
    std::error_code ec;
    const std::filesystem::path abs = std::filesystem::absolute(dir, ec);
    if (!ec) path += ":" + abs.string();
  }
  return path + ":" + kSystemDebugDir;
}

}  // namespace

ModuleResolver::ModuleResolver(const ModuleSource& source, std::span<const std::string> debug_dirs)
    : use_dwarf_(source.kind == SourceKind::kDwarf),
      debug_path_(source.debug_path),
      search_path_(dwfl_search_path(debug_dirs)) {
  search_path_ptr_ = search_path_.data();
  callbacks_.find_elf = dwfl_build_id_find_elf;  // unused: the file is reported by path
  callbacks_.find_debuginfo = &ModuleResolver::find_debuginfo;
  callbacks_.section_address = dwfl_offline_section_address;
  callbacks_.debuginfo_path = &search_path_ptr_;
}

Result<std::unique_ptr<ModuleResolver>> ModuleResolver::open(const ModuleSource& source,
                                                             std::span<const std::string> debug_dirs) {
  std::unique_ptr<ModuleResolver> r(new ModuleResolver(source, debug_dirs));
  r->dwfl_ = dwfl_begin(&r->callbacks_);
  if (r->dwfl_ == nullptr) {
    return Error{ErrorCode::kInternal, fmt::format("{}: libdwfl: {}", source.elf_path, dwfl_errmsg(-1))};
  }
  dwfl_report_begin(r->dwfl_);
  r->module_ = dwfl_report_elf(r->dwfl_, source.elf_path.c_str(), source.elf_path.c_str(), -1, 0, true);
  if (r->module_ == nullptr) {
    return Error{ErrorCode::kIo, fmt::format("{}: cannot load it ({})", source.elf_path, dwfl_errmsg(-1))};
  }
  dwfl_report_end(r->dwfl_, nullptr, nullptr);
  // The callback finds its resolver through the module's userdata slot.
  void** userdata = nullptr;
  dwfl_module_info(r->module_, &userdata, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr);
  *userdata = r.get();
  r->cu_index_ = std::make_unique<CuIndex>(r->module_);
  r->elf_symbols_ = std::make_unique<ElfSymbols>(r->module_);
  r->dwarf_frames_ = std::make_unique<DwarfFrames>(r->names_, *r->elf_symbols_);
  return r;
}

ModuleResolver::~ModuleResolver() {
  if (dwfl_ != nullptr) dwfl_end(dwfl_);
}

int ModuleResolver::find_debuginfo(Dwfl_Module* mod, void** userdata, const char* modname, Dwarf_Addr base,
                                   const char* file_name, const char* debuglink_file, GElf_Word debuglink_crc,
                                   char** debuginfo_file_name) {
  auto* self = static_cast<ModuleResolver*>(*userdata);
  // Symbols-only modules have no trustworthy debug file: ModuleSource looked.
  if (self == nullptr || !self->use_dwarf_) return -1;
  // libdwfl asks for the module's debug file first (find_dw), then for the
  // dwz file its DWARF names (find_debug_altlink).
  if (!self->debug_served_ && !self->debug_path_.empty()) {
    self->debug_served_ = true;
    const int fd = ::open(self->debug_path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) *debuginfo_file_name = strdup(self->debug_path_.c_str());
    return fd;
  }
  return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file, debuglink_crc,
                                      debuginfo_file_name);
}

std::vector<ResolvedFrame> ModuleResolver::resolve(std::uint64_t return_offset) {
  // A return address follows its call: ip - 1 lies in the call instruction,
  // which is where the line and any inline chain must come from.
  const Dwarf_Addr pc = return_offset == 0 ? 0 : return_offset - 1;
  std::vector<ResolvedFrame> frames;
  if (use_dwarf_) {
    if (const auto hit = cu_index_->find(pc)) frames = dwarf_frames_->frames_at(hit->cu, pc - hit->bias, pc);
  }
  if (frames.empty()) frames.emplace_back();
  // DWARF without a function here (assembly, a CU without DIEs for it): the
  // symbol table still names it.
  if (frames.back().function == nullptr) frames.back().function = names_.get(elf_symbols_->at(pc));
  return frames;
}

}  // namespace memrec::analyzer
