// MEMREC_OUTPUT templates: expansion, mode 0600, and never overwriting.
#include "dump_file.h"

#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>
#include <filesystem>
#include <string>

#include "fd_guard.h"

using namespace memrec::preload;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  TempDir() {
    char tmpl[] = "/tmp/memrec-output-test-XXXXXX";
    path = mkdtemp(tmpl);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string path;
};

std::string create(const std::string& tmpl, std::uint64_t pid = 42, std::uint64_t start = 1700000000) {
  char path[4096];
  const int fd = create_output(tmpl.c_str(), pid, start, path, sizeof(path));
  REQUIRE(fd >= 0);
  guarded_close(fd);
  return path;
}

std::string exe_name() { return fs::read_symlink("/proc/self/exe").filename().string(); }

}  // namespace

TEST_SUITE("preload/dump_file") {
  TEST_CASE("the template expands pid, executable, start time and percent") {
    TempDir dir;
    CHECK(create(dir.path + "/m.%p.%e.%t.100%%.dat") == dir.path + "/m.42." + exe_name() + ".1700000000.100%.dat");
  }

  TEST_CASE("a file is created with mode 0600") {
    TempDir dir;
    ::umask(0);
    const std::string path = create(dir.path + "/mode.dat");
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
  }

  TEST_CASE("an existing name gets a numbered suffix before its extension") {
    TempDir dir;
    CHECK(create(dir.path + "/x.%p.dat") == dir.path + "/x.42.dat");
    CHECK(create(dir.path + "/x.%p.dat") == dir.path + "/x.42.1.dat");
    CHECK(create(dir.path + "/x.%p.dat") == dir.path + "/x.42.2.dat");
    CHECK(create(dir.path + "/noext") == dir.path + "/noext");
    CHECK(create(dir.path + "/noext") == dir.path + "/noext.1");
  }

  TEST_CASE("%n counts up to the first free name") {
    TempDir dir;
    CHECK(create(dir.path + "/run-%n.dat") == dir.path + "/run-0.dat");
    CHECK(create(dir.path + "/run-%n.dat") == dir.path + "/run-1.dat");
  }

  TEST_CASE("an unwritable directory fails with errno, not a crash") {
    char path[4096];
    CHECK(create_output("/proc/memrec-cannot-create/x.dat", 1, 1, path, sizeof(path)) == -1);
    CHECK(errno != 0);
  }
}
