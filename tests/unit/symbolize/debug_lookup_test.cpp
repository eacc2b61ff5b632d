// Where the Symbolizer finds debug info for a stripped library: through its
// .gnu_debuglink, by build-id under a --debug-dir, by file name in a
// --debug-dir, and, with none of them, the .dynsym fallback. The library is
// one fixture (sym_split.c) in three files made by objcopy at build time.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fixture_loader.h"
#include "symbolize/elf_file.h"
#include "symbolize/symbolizer.h"

using namespace memrec::analyzer;
using namespace memrec::analyzer::testing;

namespace {

// The stripped copies have the full library's layout and build-id, so its
// run's addresses stand for theirs.
struct Split {
  RunFixture run = run_library(SYM_SPLIT_FULL_LIB, "split_run");
  SymbolizeModule as(const std::string& path) const {
    SymbolizeModule m = run.module;
    m.path = path;
    return m;
  }
  std::vector<std::uint64_t> ips() const { return {run.trace.ips[0], run.trace.ips[1]}; }
};

// Full DWARF answers: split_run and the static split_hidden, each with its
// file and line, and nothing inlined.
void check_full(const Split& split, const std::vector<Symbol>& got) {
  REQUIRE(got.size() == 2);
  const char* names[] = {"split_run", "split_hidden"};
  for (std::size_t i = 0; i < 2; ++i) {
    CAPTURE(i);
    REQUIRE(got[i].frames.size() == 1);
    CHECK(got[i].frames[0].function == names[i]);
    CHECK(basename(got[i].frames[0].file) == "sym_split.c");
    CHECK(got[i].frames[0].line == static_cast<std::uint32_t>(split.run.trace.lines[i]));
    CHECK_FALSE(got[i].frames[0].inlined);
  }
}

std::string build_id_path(const SymbolizeModule& m) {
  const std::string hex = to_hex(m.build_id);
  return ".build-id/" + hex.substr(0, 2) + "/" + hex.substr(2) + ".debug";
}

}  // namespace

TEST_SUITE("symbolize/debug_lookup") {
  TEST_CASE("the stripped fixtures carry no DWARF and the debug file does") {
    CHECK_FALSE(ElfFile::open(SYM_SPLIT_LINKED_LIB)->has_dwarf());
    CHECK_FALSE(ElfFile::open(SYM_SPLIT_BARE_LIB)->has_dwarf());
    CHECK(ElfFile::open(SYM_SPLIT_DEBUG)->has_dwarf());
    CHECK(ElfFile::open(SYM_SPLIT_LINKED_LIB)->debuglink() == std::optional<std::string>("libsym_split.debug"));
  }

  TEST_CASE("finds the debug file through .gnu_debuglink next to the library") {
    const Split split;
    Symbolizer symbolizer({});
    check_full(split, symbolizer.symbolize(split.as(SYM_SPLIT_LINKED_LIB), split.ips()));
    CHECK(symbolizer.warnings().empty());
  }

  TEST_CASE("finds the debug file through .gnu_debuglink in .debug/ and in a --debug-dir") {
    const Split split;
    const TempDir dir;
    const std::string lib = dir.copy_in(SYM_SPLIT_LINKED_LIB, "lib/libsym_split.so");
    SUBCASE("in .debug/ beside the library") {
      dir.copy_in(SYM_SPLIT_DEBUG, "lib/.debug/libsym_split.debug");
      Symbolizer symbolizer({});
      check_full(split, symbolizer.symbolize(split.as(lib), split.ips()));
    }
    SUBCASE("in a --debug-dir, under the library's folder") {
      dir.copy_in(SYM_SPLIT_DEBUG, "symbols" + (dir.path() / "lib/libsym_split.debug").string());
      Symbolizer symbolizer({{(dir.path() / "symbols").string()}, 0});
      check_full(split, symbolizer.symbolize(split.as(lib), split.ips()));
    }
  }

  TEST_CASE("finds the debug file by build-id under a --debug-dir") {
    const Split split;
    const TempDir dir;
    dir.copy_in(SYM_SPLIT_DEBUG, build_id_path(split.run.module));
    Symbolizer symbolizer({{dir.path().string()}, 0});
    check_full(split, symbolizer.symbolize(split.as(SYM_SPLIT_BARE_LIB), split.ips()));
    CHECK(symbolizer.warnings().empty());
  }

  TEST_CASE("skips a debug file whose build-id is not the recorded one") {
    const Split split;
    const TempDir dir;
    // The right name and place, the wrong contents.
    const std::string lib = dir.copy_in(SYM_SPLIT_LINKED_LIB, "libsym_split.so");
    dir.copy_in(SYM_C_LIB, "libsym_split.debug");
    Symbolizer symbolizer({});
    const auto got = symbolizer.symbolize(split.as(lib), split.ips());
    CHECK(got[0].frames == std::vector<SourceFrame>{{"split_run", "", 0, false}});
    CHECK(symbolizer.warnings().size() == 1);
  }

  TEST_CASE("uses a copy found by name in a --debug-dir when the recorded file is gone") {
    const Split split;
    const TempDir dir;
    dir.copy_in(SYM_SPLIT_FULL_LIB, "copies/libsym_split_full.so");
    Symbolizer symbolizer({{(dir.path() / "copies").string()}, 0});
    check_full(split, symbolizer.symbolize(split.as("/gone/libsym_split_full.so"), split.ips()));
    CHECK(symbolizer.warnings().empty());
  }

  TEST_CASE("names exported functions from .dynsym without debug info, and warns once") {
    const Split split;
    Symbolizer symbolizer({});
    const auto got = symbolizer.symbolize(split.as(SYM_SPLIT_BARE_LIB), split.ips());
    (void)symbolizer.symbolize(split.as(SYM_SPLIT_BARE_LIB), split.ips());
    CHECK(got[0].frames == std::vector<SourceFrame>{{"split_run", "", 0, false}});
    // split_hidden is static: stripping took its only symbol.
    CHECK(got[1].frames == std::vector<SourceFrame>{SourceFrame{}});
    const auto warnings = symbolizer.warnings();
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("no debug info") != std::string::npos);
  }
}
