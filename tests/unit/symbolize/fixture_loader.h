// Runs the symbolizer fixtures (tests/fixtures/symbolize/) and describes
// their modules the way the recorder does (path, bias, build-id, PT_LOAD
// segments), so tests assert on real return addresses.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <string>

#include "symbolize/symbolizer.h"

namespace memrec::analyzer::testing {

struct Trace {
  std::array<std::uint64_t, 4> ips{};
  std::array<int, 4> lines{};
};

struct RunFixture {
  SymbolizeModule module;
  Trace trace;
  void* handle = nullptr;  // for dlclose
};

// dlopen()s `path`, calls its `void run(struct fixture_trace*)`, and
// describes the loaded module. Fails the test if any step fails.
RunFixture run_library(const std::string& path, const char* run_symbol);

// Runs the fixture executable `path` and reads what it prints.
RunFixture run_executable(const std::string& path);

// `path` as the recorder would describe it if loaded at `bias`.
SymbolizeModule describe_file(const std::string& path, std::uint64_t bias);

std::string basename(const std::string& path);

// A fresh folder under the system's temporary folder, removed with its contents.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Copies `from` to path()/`relative`, creating folders on the way.
  std::string copy_in(const std::string& from, const std::string& relative) const;

 private:
  std::filesystem::path path_;
};

}  // namespace memrec::analyzer::testing
