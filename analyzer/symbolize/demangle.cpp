// C++ goes through the C++ runtime's own demangler (abi::__cxa_demangle).
// Rust goes through libiberty's rust_demangle (binutils' and GDB's) when the
// build found libiberty-dev: it decodes v0 and the legacy `$LT$`-style escapes.
// Without it (or when it refuses one), legacy names are demangled as C++ and
// cleaned up here.
#include "symbolize/demangle.h"

#include <cxxabi.h>

#include <array>
#include <cstdlib>
#include <memory>
#include <utility>

#ifndef MEMREC_HAVE_LIBIBERTY
#define MEMREC_HAVE_LIBIBERTY 0
#endif
#if MEMREC_HAVE_LIBIBERTY
#include <libiberty/demangle.h>
#endif

namespace memrec::analyzer {
namespace {

struct FreeDeleter {
  void operator()(char* p) const { std::free(p); }
};
using MallocedString = std::unique_ptr<char, FreeDeleter>;

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// Rust legacy: `_ZN` … `17h` + 16 hex digits + `E`, the hash as last path element.
bool is_rust_legacy(std::string_view name) {
  constexpr std::size_t kTail = 3 + 16 + 1;  // "17h" hash "E"
  if (!name.starts_with("_ZN") || name.size() < 3 + kTail) return false;
  const std::string_view tail = name.substr(name.size() - kTail);
  if (!tail.starts_with("17h") || tail.back() != 'E') return false;
  for (const char c : tail.substr(3, 16)) {
    if (!is_hex(c)) return false;
  }
  return true;
}

std::string cxa_demangle(const std::string& mangled) {
  int status = 0;
  const MallocedString out(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status));
  return status == 0 && out ? std::string(out.get()) : std::string();
}

// The escapes rustc's legacy mangling uses for characters Itanium names cannot
// hold (rustc_symbol_mangling/src/legacy.rs).
std::string unescape_rust_legacy(std::string_view s) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 16> kEscapes{{
      {"$SP$", "@"},
      {"$BP$", "*"},
      {"$RF$", "&"},
      {"$LT$", "<"},
      {"$GT$", ">"},
      {"$LP$", "("},
      {"$RP$", ")"},
      {"$C$", ","},
      {"$u20$", " "},
      {"$u22$", "\""},
      {"$u27$", "'"},
      {"$u2b$", "+"},
      {"$u3b$", ";"},
      {"$u5b$", "["},
      {"$u5d$", "]"},
      {"$u7e$", "~"},
  }};
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    if (s.substr(i, 2) == "..") {
      out += "::";
      i += 2;
      continue;
    }
    bool replaced = false;
    for (const auto& [from, to] : kEscapes) {
      if (s.substr(i, from.size()) == from) {
        out += to;
        i += from.size();
        replaced = true;
        break;
      }
    }
    if (!replaced) out += s[i++];
  }
  return out;
}

std::string demangle_rust_legacy(const std::string& mangled) {
  std::string out = cxa_demangle(mangled);
  // "…::h0123456789abcdef": the hash only tells apart builds, not functions.
  constexpr std::size_t kHash = 2 + 1 + 16;
  if (out.size() > kHash && out.compare(out.size() - kHash, 3, "::h") == 0) out.resize(out.size() - kHash);
  return out.empty() ? out : unescape_rust_legacy(out);
}

}  // namespace

bool demangles_rust_v0() { return MEMREC_HAVE_LIBIBERTY != 0; }

std::string demangle(std::string_view name) {
  const bool itanium = name.starts_with("_Z");
  const bool rust_v0 = name.starts_with("_R");
  if (!itanium && !rust_v0) return std::string(name);
  const std::string mangled(name);
  std::string out;
#if MEMREC_HAVE_LIBIBERTY
  if (rust_v0 || is_rust_legacy(name)) {
    const MallocedString r(rust_demangle(mangled.c_str(), DMGL_PARAMS | DMGL_ANSI));
    if (r) out = r.get();
  }
#endif
  // libiberty also refuses legacy hashes with fewer than 5 distinct digits.
  if (out.empty() && is_rust_legacy(name)) out = demangle_rust_legacy(mangled);
  if (out.empty() && itanium) out = cxa_demangle(mangled);
  return out.empty() ? mangled : out;
}

}  // namespace memrec::analyzer
