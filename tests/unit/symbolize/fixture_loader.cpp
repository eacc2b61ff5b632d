// dlinfo(RTLD_DI_LINKMAP) gives the bias (l_addr) and the path glibc
// recorded; the build-id and segments are read from that file, as the
// preload reads them from the loaded phdrs (same bytes).
#include "fixture_loader.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <doctest/doctest.h>
#include <cstdio>
#include <cstdlib>

#include "fixture_trace.h"
#include "symbolize/elf_file.h"

namespace memrec::analyzer::testing {

SymbolizeModule describe_file(const std::string& path, std::uint64_t bias) {
  auto elf = ElfFile::open(path);
  if (!elf) FAIL(elf.error().message);
  return SymbolizeModule{path, elf->build_id(), bias, elf->load_segments()};
}

RunFixture run_library(const std::string& path, const char* run_symbol) {
  RunFixture out;
  out.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (out.handle == nullptr) FAIL(dlerror());
  using RunFn = void (*)(fixture_trace*);
  auto run = reinterpret_cast<RunFn>(dlsym(out.handle, run_symbol));
  if (run == nullptr) FAIL(run_symbol);
  fixture_trace trace{};
  run(&trace);
  for (std::size_t i = 0; i < out.trace.ips.size(); ++i) {
    out.trace.ips[i] = reinterpret_cast<std::uintptr_t>(trace.ips[i]);
    out.trace.lines[i] = trace.lines[i];
  }
  link_map* map = nullptr;
  REQUIRE(dlinfo(out.handle, RTLD_DI_LINKMAP, &map) == 0);
  out.module = describe_file(map->l_name, map->l_addr);
  return out;
}

RunFixture run_executable(const std::string& path) {
  RunFixture out;
  FILE* pipe = popen(path.c_str(), "r");
  REQUIRE(pipe != nullptr);
  unsigned long bias = 0;
  REQUIRE(std::fscanf(pipe, "bias %lx\n", &bias) == 1);
  for (int i = 0; i < 2; ++i) {
    int slot = -1;
    unsigned long ip = 0;
    int line = 0;
    REQUIRE(std::fscanf(pipe, "slot %d %lx %d\n", &slot, &ip, &line) == 3);
    REQUIRE(slot == i);
    out.trace.ips[i] = ip;
    out.trace.lines[i] = line;
  }
  REQUIRE(pclose(pipe) == 0);
  out.module = describe_file(path, bias);
  return out;
}

std::string basename(const std::string& path) { return std::filesystem::path(path).filename().string(); }

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "memrec-symbolize-XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string TempDir::copy_in(const std::string& from, const std::string& relative) const {
  const std::filesystem::path to = path_ / relative;
  std::filesystem::create_directories(to.parent_path());
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  return to.string();
}

}  // namespace memrec::analyzer::testing
