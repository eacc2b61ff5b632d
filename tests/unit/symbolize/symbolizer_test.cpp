// The Symbolizer on real return addresses captured by the fixtures
// (tests/fixtures/symbolize/): exact function names, file names and lines,
// inline chains, the cache and workers, and the module+offset fallbacks.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "fixture_loader.h"
#include "symbolize/symbolizer.h"

using namespace memrec::analyzer;
using namespace memrec::analyzer::testing;

namespace {

std::vector<std::uint64_t> first_ips(const Trace& t, std::size_t n) { return {t.ips.begin(), t.ips.begin() + n}; }

void check_frame(const SourceFrame& frame, const std::string& function, const std::string& file, int line,
                 bool inlined = false) {
  CHECK(frame.function == function);
  CHECK(basename(frame.file) == file);
  CHECK(frame.line == static_cast<std::uint32_t>(line));
  CHECK(frame.inlined == inlined);
}

}  // namespace

TEST_SUITE("symbolize/symbolizer") {
  TEST_CASE("names the C function, source file and line of each return address") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 3));
    REQUIRE(got.size() == 3);
    const char* names[] = {"sym_c_run", "sym_c_outer", "sym_c_middle"};
    for (std::size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      REQUIRE(got[i].frames.size() == 1);
      check_frame(got[i].frames[0], names[i], "sym_c.c", f.trace.lines[i]);
      CHECK(got[i].module == f.module.path);
      CHECK(got[i].module_offset == f.trace.ips[i] - f.module.bias);
    }
    CHECK(symbolizer.warnings().empty());
  }

  TEST_CASE("names a source file by its absolute path when the build named it relative to its folder") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 1));
    CHECK(got[0].frames.at(0).file == std::filesystem::path(SYM_C_SOURCE).lexically_normal().string());
  }

  TEST_CASE("demangles C++ names with their namespaces, template arguments and operators") {
    const RunFixture f = run_library(SYM_CPP_LIB, "sym_cpp_run");
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 2));
    REQUIRE(got[0].frames.size() == 1);
    check_frame(got[0].frames[0], "ns::Widget<int>::make(int)", "sym_cpp.cpp", f.trace.lines[0]);
    REQUIRE(got[1].frames.size() == 1);
    check_frame(got[1].frames[0], "ns::operator<(ns::Widget<int> const&, ns::Widget<int> const&)", "sym_cpp.cpp",
                f.trace.lines[1]);
  }

  TEST_CASE("reports an inlined call as an inlined frame before the function it was inlined into") {
    const RunFixture f = run_library(SYM_INLINE_LIB, "sym_inline_run");
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 1));
    REQUIRE(got[0].frames.size() == 2);
    check_frame(got[0].frames[0], "sym_inline_leaf", "sym_inline.c", f.trace.lines[0], true);
    check_frame(got[0].frames[1], "sym_inline_run", "sym_inline.c", f.trace.lines[1], false);
  }

  TEST_CASE("finds the compile unit of a library without .debug_aranges") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    SymbolizeModule stripped = f.module;
    stripped.path = SYM_C_NO_ARANGES_LIB;
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(stripped, first_ips(f.trace, 3));
    check_frame(got[0].frames.at(0), "sym_c_run", "sym_c.c", f.trace.lines[0]);
    check_frame(got[1].frames.at(0), "sym_c_outer", "sym_c.c", f.trace.lines[1]);
    check_frame(got[2].frames.at(0), "sym_c_middle", "sym_c.c", f.trace.lines[2]);
  }

  TEST_CASE("symbolizes a library linked to start at a non-zero address") {
    const RunFixture f = run_library(SYM_C_HIGH_LIB, "sym_c_run");
    REQUIRE(f.module.segments.at(0).vaddr == 0x10000000);
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 3));
    check_frame(got[0].frames.at(0), "sym_c_run", "sym_c.c", f.trace.lines[0]);
    check_frame(got[2].frames.at(0), "sym_c_middle", "sym_c.c", f.trace.lines[2]);
    CHECK(got[0].module_offset > 0x10000000);
  }

  TEST_CASE("symbolizes a non-PIE main executable") {
    const RunFixture f = run_executable(SYM_EXE);
    CHECK(f.module.bias == 0);
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 2));
    check_frame(got[0].frames.at(0), "sym_exe_work", "sym_exe.c", f.trace.lines[0]);
    check_frame(got[1].frames.at(0), "main", "sym_exe.c", f.trace.lines[1]);
  }

  TEST_CASE("symbolizes a library that was dlclosed, from its file on disk") {
    RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    REQUIRE(dlclose(f.handle) == 0);
    Symbolizer symbolizer({});
    const std::vector<Symbol> got = symbolizer.symbolize(f.module, first_ips(f.trace, 1));
    check_frame(got[0].frames.at(0), "sym_c_run", "sym_c.c", f.trace.lines[0]);
  }

  TEST_CASE("gives the same answers from the cache and from many workers at once") {
    const RunFixture c = run_library(SYM_C_LIB, "sym_c_run");
    const RunFixture cpp = run_library(SYM_CPP_LIB, "sym_cpp_run");
    Symbolizer one({{}, 1});
    Symbolizer four({{}, 4});
    std::vector<Symbolizer::Request> requests;
    for (int copy = 0; copy < 3; ++copy) {
      requests.push_back({&c.module, first_ips(c.trace, 3)});
      requests.push_back({&cpp.module, first_ips(cpp.trace, 2)});
    }
    const auto want = one.symbolize_all(requests);
    for (const auto& got : {four.symbolize_all(requests), four.symbolize_all(requests), one.symbolize_all(requests)}) {
      REQUIRE(got.size() == want.size());
      for (std::size_t i = 0; i < got.size(); ++i) {
        REQUIRE(got[i].size() == want[i].size());
        for (std::size_t j = 0; j < got[i].size(); ++j) {
          CHECK(got[i][j].frames == want[i][j].frames);
          CHECK(got[i][j].module_offset == want[i][j].module_offset);
        }
      }
    }
    CHECK(want[1][0].frames.at(0).function == "ns::Widget<int>::make(int)");
  }

  TEST_CASE("answers callers on several threads at once") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    Symbolizer symbolizer({{}, 2});
    std::vector<std::vector<Symbol>> got(4);
    std::vector<std::thread> callers;
    for (auto& out : got) {
      callers.emplace_back([&] { out = symbolizer.symbolize(f.module, first_ips(f.trace, 3)); });
    }
    for (std::thread& t : callers) t.join();
    for (const auto& symbols : got) {
      REQUIRE(symbols.size() == 3);
      check_frame(symbols[2].frames.at(0), "sym_c_middle", "sym_c.c", f.trace.lines[2]);
    }
  }

  TEST_CASE("keeps the same file at two load addresses apart only by offset") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    SymbolizeModule moved = f.module;
    moved.bias += 0x10000000;
    Symbolizer symbolizer({});
    const auto a = symbolizer.symbolize(f.module, first_ips(f.trace, 1));
    const auto b = symbolizer.symbolize(moved, std::vector<std::uint64_t>{f.trace.ips[0] + 0x10000000});
    CHECK(a[0].frames == b[0].frames);
    CHECK(a[0].module_offset == b[0].module_offset);
  }

  TEST_CASE("shows a module whose file is gone as module+offset and warns once") {
    const SymbolizeModule gone{"/nonexistent/memrec/libgone.so", {0xab, 0xcd, 0xef}, 0x7f0000000000, {}};
    Symbolizer symbolizer({});
    const auto got = symbolizer.symbolize(gone, std::vector<std::uint64_t>{0x7f0000001235, 0x7f0000002000});
    (void)symbolizer.symbolize(gone, std::vector<std::uint64_t>{0x7f0000003000});
    REQUIRE(got.size() == 2);
    CHECK(got[0].frames == std::vector<SourceFrame>{SourceFrame{}});
    CHECK(got[0].module_offset == 0x1235);
    CHECK(module_offset_name(got[0]) == "libgone.so+0x1235");
    const auto warnings = symbolizer.warnings();
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("/nonexistent/memrec/libgone.so") != std::string::npos);
    CHECK(warnings[0].find("abcdef") != std::string::npos);
  }

  TEST_CASE("leaves the vDSO as module+offset without a warning") {
    const SymbolizeModule vdso{"linux-vdso.so.1", {0x01, 0x02}, 0x7fff00000000, {}};
    Symbolizer symbolizer({});
    const auto got = symbolizer.symbolize(vdso, std::vector<std::uint64_t>{0x7fff00000a10});
    CHECK(got[0].frames == std::vector<SourceFrame>{SourceFrame{}});
    CHECK(module_offset_name(got[0]) == "linux-vdso.so.1+0xa10");
    CHECK(symbolizer.warnings().empty());
  }

  TEST_CASE("warns once when the file was rebuilt, and names its functions from ELF symbols while its segments match") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    SymbolizeModule recorded = f.module;
    recorded.build_id.back() ^= 0xff;
    Symbolizer symbolizer({});
    const auto got = symbolizer.symbolize(recorded, first_ips(f.trace, 3));
    (void)symbolizer.symbolize(recorded, first_ips(f.trace, 3));
    // Names only: no file and line, which a rebuild may have moved.
    CHECK(got[0].frames == std::vector<SourceFrame>{SourceFrame{"sym_c_run", "", 0, false}});
    CHECK(got[1].frames == std::vector<SourceFrame>{SourceFrame{"sym_c_outer", "", 0, false}});
    const auto warnings = symbolizer.warnings();
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("build-id") != std::string::npos);
    CHECK(warnings[0].find(f.module.path) == 0);
  }

  TEST_CASE("warns once when the file was rebuilt with its code moved, and keeps module+offset") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    SymbolizeModule recorded = f.module;
    recorded.build_id.back() ^= 0xff;
    recorded.segments.at(1).memsz += 0x1000;
    Symbolizer symbolizer({});
    const auto got = symbolizer.symbolize(recorded, first_ips(f.trace, 3));
    CHECK(got[0].frames == std::vector<SourceFrame>{SourceFrame{}});
    CHECK(symbolizer.warnings().size() == 1);
  }

  TEST_CASE("answers from what a prefetch resolved, exactly as without it") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    Symbolizer cold({});
    const std::vector<Symbol> want = cold.symbolize(f.module, first_ips(f.trace, 3));
    Symbolizer warm({});
    std::thread worker([&] { warm.prefetch(f.module, first_ips(f.trace, 2)); });
    worker.join();
    const std::vector<Symbol> got = warm.symbolize(f.module, first_ips(f.trace, 3));
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].frames == want[i].frames);
      CHECK(got[i].module_offset == want[i].module_offset);
    }
    CHECK(got[0].frames.at(0).function == "sym_c_run");
  }

  TEST_CASE("warns about a prefetched module only once a request uses it, in order of use") {
    const SymbolizeModule gone{"/nonexistent/memrec/libgone.so", {0xab}, 0x7f0000000000, {}};
    const SymbolizeModule lost{"/nonexistent/memrec/liblost.so", {0xcd}, 0x7e0000000000, {}};
    Symbolizer symbolizer({});
    symbolizer.prefetch(gone, std::vector<std::uint64_t>{0x7f0000001235});
    symbolizer.prefetch(lost, std::vector<std::uint64_t>{0x7e0000001235});
    CHECK(symbolizer.warnings().empty());
    (void)symbolizer.symbolize(lost, std::vector<std::uint64_t>{0x7e0000001235});
    (void)symbolizer.symbolize(gone, std::vector<std::uint64_t>{0x7f0000001235});
    const auto warnings = symbolizer.warnings();
    REQUIRE(warnings.size() == 2);
    CHECK(warnings[0].find("liblost.so") != std::string::npos);
    CHECK(warnings[1].find("libgone.so") != std::string::npos);
  }
}
