// SymbolPrefetch (analyzer/reports/symbol_prefetch.h): what it resolves while
// a dump loads changes no answer and no warning, and a dump of many modules or
// of addresses in none gets no further head start without failing.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "fixture_loader.h"
#include "reports/symbol_prefetch.h"
#include "symbolize/symbolizer.h"

using namespace memrec;
using namespace memrec::analyzer;
using namespace memrec::analyzer::testing;

namespace {

ModuleInfo module_info(const SymbolizeModule& m, std::uint32_t id) {
  ModuleInfo info;
  info.id = ModuleId{id};
  info.path = m.path;
  for (const std::uint8_t b : m.build_id) info.build_id.push_back(static_cast<std::byte>(b));
  info.bias = m.bias;
  info.segments = m.segments;
  info.load_gen = 1;
  return info;
}

StackAddress at(std::uint64_t ip) { return StackAddress{ip, 1}; }

}  // namespace

TEST_SUITE("symbolize/symbol_prefetch") {
  TEST_CASE("what it resolves during the load changes no answer and no warning") {
    const RunFixture f = run_library(SYM_C_LIB, "sym_c_run");
    LoadedDump dump;
    dump.modules.push_back(module_info(f.module, 1));
    const std::vector<std::uint64_t> ips(f.trace.ips.begin(), f.trace.ips.begin() + 3);
    Symbolizer warm({});
    {
      SymbolPrefetch prefetch(warm);
      const std::vector<StackAddress> addresses = {at(ips[2]), at(ips[1]), at(ips[0]), at(0x10)};  // 0x10: in no module
      prefetch.add(dump.modules, addresses);
      prefetch.finish();
    }
    CHECK(warm.warnings().empty());
    Symbolizer cold({});
    const std::vector<Symbol> want = cold.symbolize(f.module, ips);
    const std::vector<Symbol> got = warm.symbolize(f.module, ips);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CAPTURE(i);
      CHECK(got[i].frames == want[i].frames);
    }
    CHECK(got[0].frames.at(0).function == "sym_c_run");
  }

  TEST_CASE("many modules and many addresses in none: it stops early and still finishes") {
    LoadedDump dump;
    std::vector<StackAddress> addresses;
    for (std::uint32_t i = 0; i < 400; ++i) {
      SymbolizeModule gone{"/nonexistent/memrec/lib" + std::to_string(i) + ".so",
                           {0xab},
                           0x7f0000000000 + i * 0x100000ull,
                           {{0, 0x10000, 0, format::kSegmentExec | format::kSegmentRead}}};
      dump.modules.push_back(module_info(gone, i + 1));
      addresses.push_back(at(gone.bias + 0x100));
      addresses.push_back(at(0x1000 + i));
    }
    Symbolizer symbolizer({});
    SymbolPrefetch prefetch(symbolizer);
    for (std::size_t i = 0; i < addresses.size(); i += 100) {
      prefetch.add(dump.modules, std::span(addresses).subspan(i, 100));
    }
    prefetch.finish();
    prefetch.finish();  // twice is harmless, as the destructor calls it again
    CHECK(symbolizer.warnings().empty());
  }
}
