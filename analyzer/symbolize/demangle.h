// Turns linkage names into the names a person reads: Itanium C++ (`_Z…`),
// Rust legacy (Itanium-like, `…17h<hash>E`: the hash is dropped) and Rust v0
// (`_R…`, only when built with libiberty). Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace memrec::analyzer {

// `name` demangled, or `name` itself when it is not mangled or does not decode.
std::string demangle(std::string_view name);

// Whether Rust v0 names (`_R…`) decode; without libiberty they stay mangled.
bool demangles_rust_v0();

}  // namespace memrec::analyzer
