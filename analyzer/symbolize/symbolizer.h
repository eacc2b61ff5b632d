// Offline symbolization: turns recorded return addresses into functions,
// source files, lines and inline frames, reading each module's file and debug
// files from disk (elfutils libdw). The model and report layers call it with
// the modules and ips of a dump; it never touches the profiled process.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "memrec/format/record_encoder.h"

namespace memrec::analyzer {

// One loaded module, as recorded (FORMAT.md, "ModuleLoad").
struct SymbolizeModule {
  std::string path;
  std::vector<std::uint8_t> build_id;  // may be empty
  std::uint64_t bias = 0;              // add to a segment's vaddr for its address in memory
  std::vector<memrec::format::Segment> segments;
};

// One function in the inline chain of an address.
struct SourceFrame {
  std::string function;  // demangled; empty if unknown
  std::string file;      // empty if unknown
  std::uint32_t line = 0;
  bool inlined = false;  // true for every frame but the last (the real function)

  bool operator==(const SourceFrame&) const = default;
};

// Everything known about one return address.
struct Symbol {
  std::vector<SourceFrame> frames;  // innermost (most inlined) first; at least one entry
  std::string module;               // the module's path
  std::uint64_t module_offset = 0;  // ip - bias: the return address in the ELF's vaddr space
};

// `module+0xoffset` (the module's file name only): what a report shows for a
// frame whose function is unknown.
std::string module_offset_name(const Symbol& symbol);

struct SymbolizerOptions {
  std::vector<std::string> debug_dirs;  // --debug-dir: searched by build-id layout and by file name
  unsigned threads = 0;                 // 0: one per hardware thread
};

// Where debug information comes from, in order (see module_source.h):
//   1. the module's file, when its build-id is the recorded one and it has DWARF;
//   2. a debug file with the recorded build-id: <dir>/.build-id/xx/yyyy.debug
//      under each --debug-dir (also <dir>/xx/yyyy.debug) and /usr/lib/debug;
//   3. its .gnu_debuglink: next to it, in .debug/, in /usr/lib/debug/<dir>/,
//      in each --debug-dir (<dir>/<dir of the file>/ and <dir>/);
//   4. a file of the same name (or name.debug) in a --debug-dir.
// Without DWARF, function names come from the ELF symbol tables (.symtab, else
// .dynsym). A file on disk whose build-id differs from the recorded one was
// rebuilt or upgraded since: its line tables would point at the wrong lines,
// so only its ELF symbol names are used, and only while its PT_LOAD segments
// are exactly the recorded ones (the code did not move); otherwise, like a
// missing file and the vDSO, its frames stay module+offset.
class Symbolizer {
 public:
  explicit Symbolizer(SymbolizerOptions options);
  ~Symbolizer();
  Symbolizer(const Symbolizer&) = delete;
  Symbolizer& operator=(const Symbolizer&) = delete;

  // Symbolizes return addresses `ips` that lie in `module` (ip - 1 is looked
  // up). Thread-safe, cached per (module file, address).
  std::vector<Symbol> symbolize(const SymbolizeModule& module, std::span<const std::uint64_t> ips);

  // Batch form: many modules at once, split across workers. requests[i].ips → results[i].
  struct Request {
    const SymbolizeModule* module;
    std::vector<std::uint64_t> ips;
  };
  std::vector<std::vector<Symbol>> symbolize_all(std::span<const Request> requests);

  // Resolves `ips` of `module` into the cache on the calling thread, so that
  // a later symbolize or symbolize_all finds them there: for work done ahead,
  // while a dump still loads. Adds no warnings to warnings() until a request
  // uses the module.
  void prefetch(const SymbolizeModule& module, std::span<const std::uint64_t> ips);

  // Warnings so far (build-id mismatch, missing files, no debug info), each
  // once per module, as sentences without a trailing newline.
  std::vector<std::string> warnings() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace memrec::analyzer
