// A frame as resolvers produce and the cache keeps it: pointers into the
// resolver's demangled names and libdw's file tables instead of strings, so
// 100k addresses cost no string copies until a caller asks for them. Valid as
// long as the resolver that made it (ModuleState keeps them all).
#pragma once

#include <cstdint>
#include <string>

#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

struct ResolvedFrame {
  const std::string* function = nullptr;  // nullptr if unknown
  const char* file = nullptr;             // nullptr if unknown
  std::uint32_t line = 0;
  bool inlined = false;

  SourceFrame to_source_frame() const {
    return SourceFrame{function != nullptr ? *function : std::string(), file != nullptr ? file : "", line, inlined};
  }
};

}  // namespace memrec::analyzer
