// The held-back events' spill file: what is read back for good gives its
// disk back (a followed dump spills for as long as it is followed), and the
// events after it read back unchanged.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "load/event_spill.h"

using namespace memrec::analyzer;

namespace {

// Disk blocks, in bytes, of the unlinked files this process has open.
std::uint64_t unlinked_bytes() {
  std::uint64_t bytes = 0;
  std::error_code ec;
  for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    const std::string target = std::filesystem::read_symlink(fd.path(), ec).string();
    struct stat st {};
    if (target.ends_with(" (deleted)") && ::stat(fd.path().c_str(), &st) == 0) bytes += st.st_blocks * 512ull;
  }
  return bytes;
}

std::vector<HeapEvent> events(std::uint64_t first, std::size_t n) {
  std::vector<HeapEvent> out;
  for (std::size_t i = 0; i < n; ++i) {
    out.push_back({first + i, 0x1000 + 16 * (first + i), 8 + i % 32, StackId{static_cast<std::uint32_t>(i % 7)},
                   i % 2 == 0 ? HeapOp::kAlloc : HeapOp::kFree});
  }
  return out;
}

}  // namespace

TEST_SUITE("analyzer/event_spill") {
  TEST_CASE("events read back for good free their disk, and the events after them read back unchanged") {
    const std::string dir = std::filesystem::temp_directory_path().string();
    const std::uint64_t before = unlinked_bytes();
    EventSpill spill(dir);
    std::uint64_t offset = 1;
    const std::vector<HeapEvent> first = events(0, 64 * 1024);  // 2 MiB
    REQUIRE(spill.append(first, offset));
    CHECK(offset == 0);
    const std::vector<HeapEvent> second = events(first.size(), 1000);
    REQUIRE(spill.append(second, offset));
    CHECK(offset == first.size());
    const std::uint64_t written = unlinked_bytes() - before;
    REQUIRE(written >= first.size() * sizeof(HeapEvent));

    std::vector<HeapEvent> back;
    spill.read(0, first.size() - 3, back);
    spill.discard(0, first.size() - 3);
    // Every whole page of what was read is a hole now: at most the page
    // holding the last 3 events and the second run are left.
    CHECK(unlinked_bytes() - before <= written - (first.size() - 3) * sizeof(HeapEvent) + 4096);

    back.clear();
    spill.read(first.size() - 3, 3 + second.size(), back);
    REQUIRE(back.size() == 3 + second.size());
    for (std::size_t i = 0; i < back.size(); ++i) {
      CAPTURE(i);
      const HeapEvent& want = i < 3 ? first[first.size() - 3 + i] : second[i - 3];
      CHECK(back[i].time_ns == want.time_ns);
      CHECK(back[i].addr == want.addr);
      CHECK(back[i].size == want.size);
      CHECK(back[i].stack == want.stack);
    }
  }
}
