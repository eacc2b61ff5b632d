// SpillColumn and SpillBuffer: values survive growth and moves, in anonymous
// memory and in unlinked files of a spill directory; a directory that cannot
// be used and a disk that fills (RLIMIT_FSIZE stands in for it) leave the
// values in memory, with a warning each.
#include "model/spill_column.h"

#include <doctest/doctest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace memrec::analyzer {
namespace {

// A fresh directory, removed (with the spill setting) at the end of the test.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = std::filesystem::temp_directory_path() / "memrec-spill-test-XXXXXX";
    path = mkdtemp(t.data());
    set_spill_directory(path);
  }
  ~TempDir() {
    set_spill_directory("");
    std::filesystem::remove_all(path);
  }
};

bool mapped_from(const std::string& dir) {
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(dir + "/") != std::string::npos) return true;
  }
  return false;
}

bool has_warning(const std::string& text) {
  for (const std::string& w : spill_warnings()) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

// Pushes values until the column holds `n`; value i is i × a large odd number.
template <typename T>
void fill(SpillColumn<T>& c, std::size_t n) {
  for (std::size_t i = c.size(); i < n; ++i) c.push_back(static_cast<T>(i * 2654435761u));
}

template <typename T>
bool holds(const SpillColumn<T>& c, std::size_t n) {
  if (c.size() != n) return false;
  for (std::size_t i = 0; i < n; ++i) {
    if (c[i] != static_cast<T>(i * 2654435761u)) return false;
  }
  return true;
}

TEST_SUITE("analyzer/spill_column") {
  TEST_CASE("without a spill directory, a column grows in memory and keeps every value") {
    set_spill_directory("");
    SpillColumn<std::uint32_t> c;
    CHECK(c.empty());
    CHECK(c.begin() == c.end());
    fill(c, 1000000);  // 4 MB: many doublings
    CHECK(holds(c, 1000000));
    CHECK_FALSE(c.spilled());
    CHECK(c.capacity() >= c.size());
    CHECK(c.back() == static_cast<std::uint32_t>(999999 * 2654435761u));
  }

  TEST_CASE("with a spill directory, a column is an unlinked file there") {
    const TempDir dir;
    SpillColumn<std::uint64_t> c;
    fill(c, 300000);
    CHECK(c.spilled());
    CHECK(holds(c, 300000));
    CHECK(mapped_from(dir.path));
    // Nothing left behind under a name: the file goes with the column.
    CHECK(std::filesystem::is_empty(dir.path));

    SUBCASE("a move hands the file over") {
      SpillColumn<std::uint64_t> moved(std::move(c));
      CHECK(moved.spilled());
      CHECK(holds(moved, 300000));
      CHECK(c.empty());  // NOLINT(bugprone-use-after-move): the moved-from state is part of the contract
      c = std::move(moved);
      CHECK(holds(c, 300000));
    }
    SUBCASE("resized for overwriting, it keeps its values and takes new ones past them") {
      c.resize_for_overwrite(400000);
      CHECK(c.size() == 400000);
      c.prepare(300000, 400000);
      for (std::uint64_t i = 300000; i < 400000; ++i) c[i] = i * 2654435761u;
      CHECK(holds(c, 400000));
      CHECK(c.spilled());
    }
    SUBCASE("released with the column") {
      c = SpillColumn<std::uint64_t>{};
      CHECK_FALSE(mapped_from(dir.path));
    }
  }

  TEST_CASE("columns double up to 256 MiB, then grow by 256 MiB at a time") {
    using C = SpillColumn<std::uint32_t>;
    constexpr std::size_t kMiB = 1 << 20;
    CHECK(C::next_capacity_bytes(0, 4) == 4);  // SpillBuffer rounds it up to 64 KiB
    CHECK(C::next_capacity_bytes(64 << 10, (64 << 10) + 4) == 128 << 10);
    CHECK(C::next_capacity_bytes(256 * kMiB, 256 * kMiB + 4) == 512 * kMiB);
    CHECK(C::next_capacity_bytes(512 * kMiB, 512 * kMiB + 4) == 768 * kMiB);
    CHECK(C::next_capacity_bytes(4096 * kMiB, 4096 * kMiB + 4) == 4352 * kMiB);
  }

  TEST_CASE("a directory that cannot hold files leaves columns in memory, with a warning") {
    set_spill_directory("/nonexistent/memrec-spill");
    SpillColumn<std::uint32_t> c;
    fill(c, 100000);
    CHECK_FALSE(c.spilled());
    CHECK(holds(c, 100000));
    CHECK(has_warning("cannot keep allocation tables in /nonexistent/memrec-spill"));
    set_spill_directory("");
  }

  TEST_CASE("a disk that fills moves a column to memory, keeping its values") {
    const TempDir dir;
    rlimit old{};
    REQUIRE(getrlimit(RLIMIT_FSIZE, &old) == 0);
    // A file past 1 MiB now fails to grow (EFBIG), as it would on a full disk.
    const rlimit small{1 << 20, old.rlim_max};
    const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
    REQUIRE(setrlimit(RLIMIT_FSIZE, &small) == 0);
    SpillColumn<std::uint64_t> c;
    fill(c, 100000);  // 0.8 MB: in the file
    const bool spilled_first = c.spilled();
    fill(c, 1000000);  // 8 MB: past the limit
    setrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, old_handler);
    CHECK(spilled_first);
    CHECK_FALSE(c.spilled());
    CHECK(holds(c, 1000000));
    CHECK(has_warning("no room left for allocation tables in " + dir.path));
  }
}

}  // namespace
}  // namespace memrec::analyzer
