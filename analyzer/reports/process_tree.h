// Links the dumps of a process tree (FORMAT.md, "File header": pid, ppid):
// a fork child's dump has its parent's pid as ppid; a program started by
// exec has the pid of the process that exec'd, so dumps sharing a pid are an
// exec chain, ordered by start time. The report prints them in this order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace memrec::analyzer {

struct ProcessKey {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::uint64_t start_mono_ns = 0;
};

enum class ProcessLink { kRoot, kFork, kExec };

struct ProcessNode {
  std::size_t input = 0;              // index into the keys given
  std::optional<std::size_t> parent;  // index into the keys given
  ProcessLink link = ProcessLink::kRoot;
  std::size_t depth = 0;
};

// Depth-first, children by start time; roots by start time.
std::vector<ProcessNode> order_process_tree(const std::vector<ProcessKey>& keys);

}  // namespace memrec::analyzer
