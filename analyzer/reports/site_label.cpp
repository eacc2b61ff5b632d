// Library frames are recognised three ways, the first that applies decides:
// - by module, for code in a shared library (libc, ld.so, libstdc++, libc++,
//   libgcc_s, the allocators, Rust's libstd dylib, memrec itself);
// - by source path, for library code compiled into the program (C++ templates
//   from /usr/include/c++/, Rust's std from /rustc/<hash>/library/ or a
//   distribution's rustc source tree, hashbrown from the cargo registry);
// - by name, for frames with no source file (stripped binaries, .dynsym).
// A frame with a known file outside those paths is the program's, whatever
// its name: `<my::Type as core::clone::Clone>::clone` derived in the program.
#include "reports/site_label.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <tuple>
#include <utility>

namespace memrec::analyzer {
namespace {

std::string_view base_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Shared objects whose code is never the program's own, by file name prefix.
constexpr std::string_view kLibraryModules[] = {
    "libc.so",     "libc-",        "ld-linux",   "ld64.so",      "libstdc++.so",
    "libc++.so",   "libc++abi.so", "libgcc_s",   "libmemrec.so", "libjemalloc",
    "libtcmalloc", "libmimalloc",  "libpthread", "libstd-",      "libdl.so",
};

// Source paths of library code that is compiled into the program.
constexpr std::string_view kLibraryPaths[] = {
    "/include/c++/",        // libstdc++'s and libc++'s headers (/usr/include/c++/12/bits/...)
    "/rustc/",              // Rust's std as rustc remaps it (/rustc/<commit>/library/...)
    "/library/alloc/src/",  // Rust's std from a rustc source tree (Debian: /usr/src/rustc-*/library/...)
    "/library/core/src/",
    "/library/std/src/",
    "/rust/deps/",      // crates std vendors (hashbrown), as rustc remaps them
    "/hashbrown-",      // hashbrown from a cargo registry
    "/hashbrown/src/",  // hashbrown vendored into a rustc source tree
    "/libstd-rust-",    // Debian's source of Rust's std
};

// Names (without return type and arguments) of library code, by prefix.
constexpr std::string_view kLibraryNames[] = {
    "std::",  "__gnu_cxx::", "__cxxabiv1::", "operator new",   "operator delete", "__cxa_", "alloc::",
    "core::", "hashbrown::", "__rust_alloc", "__rust_realloc", "__rdl_",          "__rg_",  "__rust_dealloc",
};

// The C allocation functions by their exact names: an allocator linked into
// the program statically has no library module to tell it by.
constexpr std::string_view kAllocatorFunctions[] = {
    "malloc",        "calloc",         "realloc",  "reallocarray", "free",
    "aligned_alloc", "posix_memalign", "memalign", "valloc",       "pvalloc",
};

bool starts_with_any(std::string_view s, const auto& prefixes) {
  return std::any_of(std::begin(prefixes), std::end(prefixes), [&](std::string_view p) { return s.starts_with(p); });
}

bool contains_any(std::string_view s, const auto& parts) {
  return std::any_of(std::begin(parts), std::end(parts),
                     [&](std::string_view p) { return s.find(p) != std::string_view::npos; });
}

// Skips the operator's symbol after `operator` at `i` (pointing past the
// word), so `operator<<` or `operator()` do not open a bracket; a `<` after
// the symbol (`operator+<char>`) opens a template argument list.
std::size_t skip_operator(std::string_view s, std::size_t i) {
  constexpr std::string_view kTokens[] = {
      "<<=", ">>=", "<=>", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "++",
      "--",  "+=",  "-=",  "*=",  "/=", "%=", "&=", "|=", "^=", "->", "()", "[]", "<",
      ">",   "+",   "-",   "*",   "/",  "%",  "^",  "&",  "|",  "~",  "!",  "=",  ","};
  while (i < s.size() && s[i] == ' ') ++i;
  for (const std::string_view t : kTokens) {
    if (s.substr(i).starts_with(t)) return i + t.size();
  }
  return i;
}

// The qualified name of a demangled function: [begin, end) of `s` without a
// leading return type and the trailing argument list and qualifiers.
std::pair<std::size_t, std::size_t> name_bounds(std::string_view s) {
  int depth = 0;
  std::size_t begin = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (depth == 0 && s.substr(i).starts_with("operator") && (i == 0 || s[i - 1] == ':' || s[i - 1] == ' ')) {
      const std::size_t after = i + 8;
      if (after < s.size() &&
          (s[after] == ' ' || std::string_view("<>=!+-*/%^&|~,([").find(s[after]) != std::string_view::npos)) {
        std::size_t j = skip_operator(s, after);
        // `operator new`, `operator delete[]`, a conversion `operator bool`: up to the argument list.
        while (j < s.size() && s[j] != '(' && s[j] != '<') ++j;
        i = j - 1;
        continue;
      }
    }
    const char c = s[i];
    if (c == '<' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == '>' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == '(' && depth == 0) {
      // `(anonymous namespace)::f` is part of the name; an argument list ends it.
      if (s.substr(i).starts_with("(anonymous namespace)")) {
        i += 20;
        continue;
      }
      return {begin, i};
    } else if (c == '(') {
      ++depth;
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (c == ' ' && depth == 0 && !s.substr(begin, i - begin).ends_with("operator") &&
               (i + 1 < s.size() && s[i + 1] != '[')) {
      begin = i + 1;  // what came before was a return type (`void`, `int*`)
    }
  }
  return {begin, s.size()};
}

std::string_view qualified_name(std::string_view s) {
  const auto [b, e] = name_bounds(s);
  return s.substr(b, e - b);
}

// `name` with each outermost <...> replaced by `replacement`, and Rust's
// turbofish (`from_elem::<u8>`, as v0 demangles) left out.
std::string elide_generics(std::string_view name, std::string_view replacement) {
  std::string out;
  int depth = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (depth == 0 && name.substr(i).starts_with("::<")) {
      std::size_t j = i + 2;
      for (int d = 0; j < name.size(); ++j) {
        if (name[j] == '<') ++d;
        if (name[j] == '>' && --d == 0) break;
      }
      i = j;
      continue;
    }
    if (name.substr(i).starts_with("operator")) {
      const std::size_t j = skip_operator(name, i + 8);
      if (depth == 0) out.append(name.substr(i, j - i));
      i = j - 1;
      continue;
    }
    if (c == '<') {
      if (depth++ == 0) out += replacement;
    } else if (c == '>' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

// The `::`-separated elements of `name` at bracket depth 0.
std::vector<std::string_view> path_elements(std::string_view name) {
  std::vector<std::string_view> out;
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    if ((c == '>' || c == ')' || c == ']' || c == '}') && depth > 0) --depth;
    if (depth == 0 && c == ':' && i + 1 < name.size() && name[i + 1] == ':') {
      out.push_back(name.substr(start, i - start));
      start = i + 2;
      ++i;
    }
  }
  out.push_back(name.substr(start));
  // Rust's turbofish is an element of its own: `from_elem::<u8>`.
  std::erase_if(out, [](std::string_view e) { return e.starts_with('<') && e.ends_with('>'); });
  return out;
}

// `<X as Y>::rest` (a trait impl) or `<X>::rest` (Rust v0's inherent impl)
// -> {X, rest}; otherwise {"", name}.
std::pair<std::string_view, std::string_view> split_trait_impl(std::string_view name) {
  if (!name.starts_with('<')) return {{}, name};
  int depth = 0;
  std::size_t as = std::string_view::npos;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '<') ++depth;
    if (name[i] == '>' && --depth == 0) {
      std::string_view rest = name.substr(i + 1);
      if (!rest.starts_with("::")) return {{}, name};
      rest.remove_prefix(2);
      return {name.substr(1, (as == std::string_view::npos ? i : as) - 1), rest};
    }
    if (depth == 1 && name.substr(i).starts_with(" as ")) as = i;
  }
  return {{}, name};
}

bool library_by_name(std::string_view function) {
  const std::string_view name = qualified_name(function);
  if (starts_with_any(name, kLibraryNames)) return true;
  if (std::find(std::begin(kAllocatorFunctions), std::end(kAllocatorFunctions), name) !=
      std::end(kAllocatorFunctions)) {
    return true;
  }
  // A Rust trait impl: library when the type is std's or a primitive.
  const auto [self_type, rest] = split_trait_impl(name);
  if (self_type.empty()) return false;
  return starts_with_any(self_type, kLibraryNames) || self_type == "str" || self_type.starts_with('[') ||
         self_type.starts_with('&') || self_type.size() == 1;
}

}  // namespace

bool is_library_frame(const SiteFrame& f) {
  if (!f.module.empty() && starts_with_any(base_name(f.module), kLibraryModules)) return true;
  if (!f.file.empty()) return contains_any(f.file, kLibraryPaths);
  return !f.function.empty() && library_by_name(f.function);
}

std::string short_function(std::string_view demangled) {
  const std::string_view name = qualified_name(demangled);
  // `<X as Y>::f`, Rust's trait impl, keeps its brackets (which type, which
  // trait) and loses only the arguments inside them: `<Vec<…> as Drop>::f`.
  const auto [self_type, rest] = split_trait_impl(name);
  if (self_type.empty()) return elide_generics(name, "<…>");
  const std::string_view inside = name.substr(1, name.size() - rest.size() - 4);  // between `<` and `>::`
  return "<" + elide_generics(inside, "<…>") + ">::" + elide_generics(rest, "<…>");
}

std::string via_name(std::string_view demangled) {
  const auto [self_type, rest] = split_trait_impl(qualified_name(demangled));
  std::vector<std::string_view> parts;
  if (!self_type.empty()) {
    parts.push_back(path_elements(self_type).back());
    for (const std::string_view p : path_elements(rest)) parts.push_back(p);
  } else {
    parts = path_elements(rest);
  }
  std::string out;
  const std::size_t first = parts.size() > 2 ? parts.size() - 2 : 0;
  for (std::size_t i = first; i < parts.size(); ++i) {
    if (!out.empty()) out += "::";
    out += elide_generics(parts[i], "");
  }
  return out;
}

void label_sites(CallSites& cs) {
  if (cs.raw_frames) return use_raw_frames(cs);
  // Frames are interned: each is classified once, however many sites use it.
  std::vector<std::uint8_t> library(cs.frames.size());
  for (std::size_t i = 0; i < cs.frames.size(); ++i) library[i] = is_library_frame(cs.frames[i]) ? 1 : 0;
  for (CallSite& site : cs.sites) {
    site.label_frame = 0;
    std::uint32_t at = 0;
    for (const std::uint32_t f : site.frames) {
      if (library[f] == 0) {
        site.label_frame = at;
        break;
      }
      ++at;
    }
  }
}

std::uint32_t label_position(const CallSites& cs, const SiteFrames& frames) {
  if (cs.raw_frames) return 0;
  std::uint32_t at = 0;
  for (const std::uint32_t f : frames) {
    if (!is_library_frame(cs.frames[f])) return at;
    ++at;
  }
  return 0;
}

void use_raw_frames(CallSites& cs) {
  cs.raw_frames = true;
  for (CallSite& site : cs.sites) site.label_frame = 0;
}

SiteLabel site_label(const CallSites& cs, const CallSite& site) {
  SiteLabel out;
  if (site.frames.empty()) return out;
  out.frame = std::min<std::uint32_t>(site.label_frame, static_cast<std::uint32_t>(site.frames.size() - 1));
  const SiteFrame& f = cs.frames[site.frames[out.frame]];
  out.text = f.function.empty() ? frame_label(f) : short_function(f.function);
  if (out.frame > 0) {
    const SiteFrame& folded = cs.frames[site.frames[out.frame - 1]];
    out.via = folded.function.empty() ? frame_label(folded) : via_name(folded.function);
  }
  return out;
}

CallSites group_by_label(const CallSites& in, std::vector<std::uint32_t>* group_of_site) {
  CallSites out;
  out.frames = in.frames;
  out.raw_frames = in.raw_frames;
  // The key: the label frame's function, file and line; a site without
  // frames stays apart.
  // The function is a string, not a view: `function.empty() ? frame_label(f)
  // : function` is a temporary std::string either way, gone after the statement.
  using Key = std::tuple<std::string, std::string_view, std::uint32_t>;
  std::map<Key, std::uint32_t> group_of;
  std::vector<std::uint32_t> merged_into(in.sites.size());
  std::vector<std::uint64_t> leader_bytes;
  for (std::size_t i = 0; i < in.sites.size(); ++i) {
    const CallSite& s = in.sites[i];
    std::uint32_t g = 0;
    bool fresh = true;
    if (!s.frames.empty()) {
      const SiteFrame& f = in.frames[s.frames[std::min<std::size_t>(s.label_frame, s.frames.size() - 1)]];
      const Key key{f.function.empty() ? frame_label(f) : f.function, f.file, f.line};
      const auto [it, inserted] = group_of.try_emplace(key, static_cast<std::uint32_t>(out.sites.size()));
      g = it->second;
      fresh = inserted;
    }
    if (fresh) {
      g = static_cast<std::uint32_t>(out.sites.size());
      out.sites.push_back(s);
      out.sites.back().paths.clear();
      leader_bytes.push_back(s.allocated_bytes);
    } else {
      CallSite& m = out.sites[g];
      m.allocations += s.allocations;
      m.allocated_bytes += s.allocated_bytes;
      m.temporary += s.temporary;
      m.leaked_bytes += s.leaked_bytes;
      m.leaked_count += s.leaked_count;
      m.peak_bytes += s.peak_bytes;
      m.stack_ids += s.stack_ids;
      m.truncated = m.truncated || s.truncated;
      m.runtime = m.runtime && s.runtime;
      if (s.allocated_bytes > leader_bytes[g]) {
        leader_bytes[g] = s.allocated_bytes;
        m.frames = s.frames;
        m.label_frame = s.label_frame;
      }
    }
    out.sites[g].paths.push_back(s.frames);
    merged_into[i] = g;
  }
  // A group of one lists no paths: there is nothing to choose between.
  for (CallSite& s : out.sites) {
    if (s.paths.size() == 1) s.paths.clear();
  }
  out.site_of_stack.reserve(in.site_of_stack.size());
  for (const auto& [stack, site] : in.site_of_stack) out.site_of_stack.emplace(stack, merged_into[site]);
  if (group_of_site != nullptr) *group_of_site = std::move(merged_into);
  return out;
}

}  // namespace memrec::analyzer
