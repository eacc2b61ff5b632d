// Linking dumps by pid/ppid: fork children under their parent, exec images
// under the process image that exec'd, orphans as roots.
#include <doctest/doctest.h>

#include "reports/process_tree.h"

using namespace memrec::analyzer;

TEST_SUITE("analyzer/process_tree") {
  TEST_CASE("puts a forked child and the program it exec'd under their parent, by start time") {
    // given: the exec'd image (same pid as the child) listed first
    const std::vector<ProcessKey> keys = {
        {20, 10, 300},  // 0: leak_three, exec'd by 20
        {10, 1, 100},   // 1: the parent
        {20, 10, 200},  // 2: the forked child before exec
    };
    const auto order = order_process_tree(keys);
    REQUIRE(order.size() == 3);
    CHECK(order[0].input == 1);
    CHECK(order[0].depth == 0);
    CHECK(order[0].link == ProcessLink::kRoot);
    CHECK(order[1].input == 2);
    CHECK(order[1].depth == 1);
    CHECK(order[1].link == ProcessLink::kFork);
    CHECK(order[2].input == 0);
    CHECK(order[2].depth == 2);
    CHECK(order[2].link == ProcessLink::kExec);
    CHECK(order[2].parent == std::optional<std::size_t>(2));
  }

  TEST_CASE("a process whose parent was not recorded is a root") {
    const auto order = order_process_tree({{5, 4, 10}, {7, 6, 5}});
    REQUIRE(order.size() == 2);
    CHECK(order[0].input == 1);
    CHECK(order[1].input == 0);
    CHECK(order[0].depth == 0);
    CHECK(order[1].depth == 0);
  }

  TEST_CASE("a parent that started after its child is not its parent") {
    // pid reuse: an older dump of pid 10 would be the parent, a newer one is not
    const auto order = order_process_tree({{10, 1, 500}, {20, 10, 100}});
    CHECK(order[0].depth == 0);
    CHECK(order[1].depth == 0);
  }
}
