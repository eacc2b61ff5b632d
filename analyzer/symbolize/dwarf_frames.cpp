// CU lookup: .debug_aranges first (present in GCC output, and cheapest), then
// the CU DIEs' DW_AT_low_pc/high_pc or DW_AT_ranges, read once per module.
// Inline chains: the outer function's DIE is found by binary search in a
// per-CU table; below it, only the children that contain the address are
// entered, so a lookup costs the depth of the inline chain.
#include "symbolize/dwarf_frames.h"

#include <dwarf.h>

#include <algorithm>
#include <filesystem>
#include <string_view>

namespace memrec::analyzer {
namespace {

struct Position {
  const char* file = nullptr;
  std::uint32_t line = 0;
};

Position line_table_position(Dwarf_Die& cu, Dwarf_Addr pc) {
  Position pos;
  Dwarf_Line* row = dwarf_getsrc_die(&cu, pc);
  if (row == nullptr) return pos;
  pos.file = dwarf_linesrc(row, nullptr, nullptr);
  int line = 0;
  if (dwarf_lineno(row, &line) == 0 && line > 0) pos.line = static_cast<std::uint32_t>(line);
  return pos;
}

// Where the inlined call `inlined` was made, in its caller.
Position call_position(Dwarf_Die& cu, Dwarf_Die& inlined) {
  Position pos;
  Dwarf_Attribute attr;
  Dwarf_Word value = 0;
  if (dwarf_formudata(dwarf_attr(&inlined, DW_AT_call_line, &attr), &value) == 0) {
    pos.line = static_cast<std::uint32_t>(value);
  }
  Dwarf_Files* files = nullptr;
  std::size_t count = 0;
  if (dwarf_formudata(dwarf_attr(&inlined, DW_AT_call_file, &attr), &value) == 0 &&
      dwarf_getsrcfiles(&cu, &files, &count) == 0 && value < count) {
    pos.file = dwarf_filesrc(files, value, nullptr, nullptr);
  }
  return pos;
}

// Scopes that can hold inlined calls. A lexical block without addresses
// (rare, but DWARF allows it) may still hold some, so it is entered blind.
bool may_contain(Dwarf_Die& die, Dwarf_Addr pc) {
  switch (dwarf_tag(&die)) {
    case DW_TAG_inlined_subroutine:
      return dwarf_haspc(&die, pc) == 1;
    case DW_TAG_lexical_block:
    case DW_TAG_try_block:
    case DW_TAG_catch_block:
      if (!dwarf_hasattr(&die, DW_AT_low_pc) && !dwarf_hasattr(&die, DW_AT_ranges)) return true;
      return dwarf_haspc(&die, pc) == 1;
    default:
      return false;
  }
}

// Appends to `chain` the inlined subroutines under `scope` that contain `pc`,
// outermost first.
void collect_inlined(Dwarf_Die& scope, Dwarf_Addr pc, std::vector<Dwarf_Die>& chain) {
  Dwarf_Die child;
  if (dwarf_child(&scope, &child) != 0) return;
  do {
    if (!may_contain(child, pc)) continue;
    const std::size_t before = chain.size();
    if (dwarf_tag(&child) == DW_TAG_inlined_subroutine) chain.push_back(child);
    collect_inlined(child, pc, chain);
    // A blind lexical block that held nothing: keep looking among its siblings.
    if (chain.size() > before) return;
  } while (dwarf_siblingof(&child, &child) == 0);
}

// Function DIEs live at the top of a CU or inside namespaces and classes
// (GCC nests C++ definitions in their DW_TAG_namespace).
bool is_container(int tag) {
  return tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type ||
         tag == DW_TAG_union_type || tag == DW_TAG_module;
}

template <typename Range>
void add_ranges(Dwarf_Die& die, std::vector<Range>& out) {
  Dwarf_Addr base = 0;
  Dwarf_Addr low = 0;
  Dwarf_Addr high = 0;
  for (ptrdiff_t off = 0; (off = dwarf_ranges(&die, off, &base, &low, &high)) > 0;) {
    if (low < high) out.push_back(Range{low, high, die});
  }
}

template <typename Range>
void collect_functions(Dwarf_Die& parent, std::vector<Range>& out) {
  Dwarf_Die child;
  if (dwarf_child(&parent, &child) != 0) return;
  do {
    const int tag = dwarf_tag(&child);
    if (tag == DW_TAG_subprogram) {
      add_ranges(child, out);
    } else if (is_container(tag)) {
      collect_functions(child, out);
    }
  } while (dwarf_siblingof(&child, &child) == 0);
}

}  // namespace

void CuIndex::build() {
  built_ = true;
  if (dwfl_module_getdwarf(module_, &bias_) == nullptr) return;
  Dwarf_Addr bias = 0;
  for (Dwarf_Die* cu = dwfl_module_nextcu(module_, nullptr, &bias); cu != nullptr;
       cu = dwfl_module_nextcu(module_, cu, &bias)) {
    Dwarf_Addr base = 0;
    Dwarf_Addr low = 0;
    Dwarf_Addr high = 0;
    for (ptrdiff_t off = 0; (off = dwarf_ranges(cu, off, &base, &low, &high)) > 0;) {
      if (low < high) ranges_.push_back(Range{low, high, *cu});
    }
  }
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) { return a.low < b.low; });
}

std::optional<CuHit> CuIndex::find(Dwarf_Addr pc) {
  Dwarf_Addr bias = 0;
  if (Dwarf_Die* cu = dwfl_module_addrdie(module_, pc, &bias)) return CuHit{*cu, bias};
  if (!built_) build();
  const Dwarf_Addr addr = pc - bias_;
  auto it =
      std::upper_bound(ranges_.begin(), ranges_.end(), addr, [](Dwarf_Addr a, const Range& r) { return a < r.low; });
  if (it == ranges_.begin() || addr >= std::prev(it)->high) return std::nullopt;
  return CuHit{std::prev(it)->cu, bias_};
}

const std::vector<DwarfFrames::FunctionRange>& DwarfFrames::functions_of(Dwarf_Die& cu) {
  auto [it, inserted] = functions_by_cu_.try_emplace(dwarf_dieoffset(&cu));
  if (inserted) {
    std::vector<FunctionRange>& ranges = it->second;
    collect_functions(cu, ranges);
    std::sort(ranges.begin(), ranges.end(),
              [](const FunctionRange& a, const FunctionRange& b) { return a.low < b.low; });
  }
  return it->second;
}

const char* DwarfFrames::full_path(Dwarf_Die& cu, const char* file) {
  if (file == nullptr || file[0] == '/') return file;
  auto [it, inserted] = full_paths_.try_emplace(file);
  if (inserted) {
    // A build run from its build folder (meson, CMake) names sources relative
    // to it; DWARF 5 leaves them relative to DW_AT_comp_dir, which libdw 0.188
    // does not join. A relative comp_dir (Debian maps its build paths away
    // with -fdebug-prefix-map) would not make them any better: keep those.
    Dwarf_Attribute attr;
    const char* dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &attr));
    it->second =
        dir != nullptr && dir[0] == '/' ? (std::filesystem::path(dir) / file).lexically_normal().string() : file;
  }
  return it->second.c_str();
}

DwarfFrames::Name DwarfFrames::function_name(Dwarf_Die& die) {
  // The linkage name carries namespaces, template arguments and parameters;
  // C functions, main and C++ functions of internal linkage (static, in an
  // anonymous namespace) have only DW_AT_name. _integrate follows
  // DW_AT_abstract_origin and DW_AT_specification to the declaration.
  Dwarf_Attribute attr;
  for (const unsigned at : {DW_AT_linkage_name, DW_AT_MIPS_linkage_name}) {
    if (const char* s = dwarf_formstring(dwarf_attr_integrate(&die, at, &attr))) return {names_.get(s), true};
  }
  return {names_.get(dwarf_formstring(dwarf_attr_integrate(&die, DW_AT_name, &attr))), false};
}

std::vector<ResolvedFrame> DwarfFrames::frames_at(Dwarf_Die cu, Dwarf_Addr pc, Dwarf_Addr module_pc) {
  std::vector<ResolvedFrame> frames;
  const Position innermost = line_table_position(cu, pc);
  const auto& functions = functions_of(cu);
  auto it = std::upper_bound(functions.begin(), functions.end(), pc,
                             [](Dwarf_Addr a, const FunctionRange& r) { return a < r.low; });
  if (it == functions.begin() || pc >= std::prev(it)->high) {
    if (innermost.file != nullptr) {
      frames.push_back(ResolvedFrame{nullptr, full_path(cu, innermost.file), innermost.line, false});
    }
    return frames;
  }
  Dwarf_Die function = std::prev(it)->die;
  std::vector<Dwarf_Die> chain{function};
  collect_inlined(function, pc, chain);

  // chain is outermost first; frames are innermost first.
  Position pos = innermost;
  for (std::size_t i = chain.size(); i-- > 0;) {
    Name name = function_name(chain[i]);
    // GCC gives a C++ function of internal linkage no linkage name, but its
    // symbol has one: use it for the real function, whose symbol this is.
    if (i == 0 && !name.qualified) {
      const char* symbol = symbols_.at(module_pc);
      if (symbol != nullptr &&
          (std::string_view(symbol).starts_with("_Z") || std::string_view(symbol).starts_with("_R"))) {
        name.text = names_.get(symbol);
      }
    }
    frames.push_back(ResolvedFrame{name.text, full_path(cu, pos.file), pos.line, i != 0});
    if (i != 0) pos = call_position(cu, chain[i]);
  }
  return frames;
}

}  // namespace memrec::analyzer
