// Finds the module an instruction address belongs to, at the module
// generation a stack was recorded in (FORMAT.md, "Stack" and "ModuleLoad").
#pragma once

#include <cstdint>
#include <span>

#include "load/loaded_dump.h"

namespace memrec::analyzer {

class ModuleMap {
 public:
  explicit ModuleMap(std::span<const ModuleInfo> modules) : modules_(modules) {}

  // The module containing return address `ip` for a stack of `module_gen`:
  // one loaded at that generation, else at the next (a library's
  // constructors run before the generation that loads it), else any module
  // containing it. nullptr if none.
  const ModuleInfo* find(std::uint64_t ip, std::uint64_t module_gen) const;

  // Whether `m` was loaded at generation `gen`.
  static bool loaded_at(const ModuleInfo& m, std::uint64_t gen);
  // Whether the call that returns to `ip` lies in one of `m`'s segments.
  static bool contains(const ModuleInfo& m, std::uint64_t ip);

 private:
  std::span<const ModuleInfo> modules_;
};

}  // namespace memrec::analyzer
