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
  // The demangled `mangled`, stable for the cache's life; nullptr for nullptr.
  // `mangled` must stay valid as long as this cache.
  const std::string* get(const char* mangled) {
    if (mangled == nullptr) return nullptr;
    auto [it, inserted] = names_.try_emplace(mangled);
    if (inserted) it->second = demangle(mangled);
    return &it->second;
  }

 private:
  // Node-based: a rehash moves no string, so returned pointers stay valid.
  std::unordered_map<const char*, std::string> names_;
};

}  // namespace memrec::analyzer
