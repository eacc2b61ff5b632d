// The candidate paths for a module's debug file, in search order.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "symbolize/debug_file_finder.h"

using namespace memrec::analyzer;
using Paths = std::vector<std::string>;

TEST_SUITE("symbolize/debug_file_finder") {
  TEST_CASE("looks for a build-id under each --debug-dir, then under /usr/lib/debug") {
    const std::vector<std::uint8_t> id{0xab, 0xcd, 0x01};
    const std::vector<std::string> dirs{"/syms", "/more/"};
    CHECK(build_id_candidates(id, dirs) == Paths{
                                               "/syms/.build-id/ab/cd01.debug",
                                               "/syms/ab/cd01.debug",
                                               "/more/.build-id/ab/cd01.debug",
                                               "/more/ab/cd01.debug",
                                               "/usr/lib/debug/.build-id/ab/cd01.debug",
                                           });
  }

  TEST_CASE("has no build-id candidates for an id too short to split") {
    CHECK(build_id_candidates(std::vector<std::uint8_t>{0xab}, {}).empty());
  }

  TEST_CASE("looks for a debuglink beside the file, in .debug/, in each --debug-dir, then in /usr/lib/debug") {
    const std::vector<std::string> dirs{"/syms"};
    CHECK(debuglink_candidates("/opt/app/lib/libx.so", "libx.debug", dirs) ==
          Paths{
              "/opt/app/lib/libx.debug",
              "/opt/app/lib/.debug/libx.debug",
              "/syms/opt/app/lib/libx.debug",
              "/syms/libx.debug",
              "/usr/lib/debug/opt/app/lib/libx.debug",
          });
  }

  TEST_CASE("refuses a debuglink that is a path rather than a file name") {
    CHECK(debuglink_candidates("/lib/libx.so", "../../etc/x.debug", {}).empty());
    CHECK(debuglink_candidates("/lib/libx.so", "", {}).empty());
  }

  TEST_CASE("looks for the file's own name and name.debug in each --debug-dir") {
    const std::vector<std::string> dirs{"/a", "/b"};
    CHECK(name_candidates("/usr/lib/libx.so.1", dirs) ==
          Paths{"/a/libx.so.1", "/a/libx.so.1.debug", "/b/libx.so.1", "/b/libx.so.1.debug"});
    CHECK(name_candidates("/usr/lib/libx.so.1", {}).empty());
  }
}
