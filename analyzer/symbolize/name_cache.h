// Demangled names by the address of their mangled string. The strings live in
// a resolver's mapped DWARF and ELF data, so one address is one name for the
// resolver's whole life, and the many addresses of one function demangle once.
// Owned by one ModuleResolver: not thread-safe.
#pragma once

#include <string>
#include <unordered_map>

#include "symbolize/demangle.h"

namespace memrec::analyzer {

class NameCache {
 public:
  // `mangled` must stay valid as long as this cache; nullptr gives "".
  const std::string& get(const char* mangled) {
    if (mangled == nullptr) return empty_;
    auto [it, inserted] = names_.try_emplace(mangled);
    if (inserted) it->second = demangle(mangled);
    return it->second;
  }

 private:
  std::unordered_map<const char*, std::string> names_;
  const std::string empty_;
};

}  // namespace memrec::analyzer
