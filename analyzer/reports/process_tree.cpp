// Parents are found among the dumps given only: a process whose parent was
// not recorded (or not passed) is a root.
#include "reports/process_tree.h"

#include <algorithm>
#include <functional>
#include <tuple>

namespace memrec::analyzer {
namespace {

// The latest dump of `pid` that started before `key` (strictly before for
// the same pid, which must be an earlier image of the same process).
std::optional<std::size_t> latest_before(const std::vector<ProcessKey>& keys, std::size_t self, std::uint64_t pid) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (i == self || keys[i].pid != pid) continue;
    const bool before = std::tie(keys[i].start_mono_ns, i) < std::tie(keys[self].start_mono_ns, self);
    if (!before) continue;
    if (!best || keys[i].start_mono_ns >= keys[*best].start_mono_ns) best = i;
  }
  return best;
}

}  // namespace

std::vector<ProcessNode> order_process_tree(const std::vector<ProcessKey>& keys) {
  const std::size_t n = keys.size();
  std::vector<ProcessNode> nodes(n);
  std::vector<std::vector<std::size_t>> children(n);
  std::vector<std::size_t> roots;
  for (std::size_t i = 0; i < n; ++i) {
    nodes[i].input = i;
    if (const auto prev = latest_before(keys, i, keys[i].pid)) {
      nodes[i].parent = prev;
      nodes[i].link = ProcessLink::kExec;
    } else if (const auto parent = latest_before(keys, i, keys[i].ppid); parent && keys[i].ppid != keys[i].pid) {
      nodes[i].parent = parent;
      nodes[i].link = ProcessLink::kFork;
    }
    if (nodes[i].parent) {
      children[*nodes[i].parent].push_back(i);
    } else {
      roots.push_back(i);
    }
  }
  const auto by_start = [&](std::size_t a, std::size_t b) {
    return std::tie(keys[a].start_mono_ns, a) < std::tie(keys[b].start_mono_ns, b);
  };
  std::sort(roots.begin(), roots.end(), by_start);
  for (auto& c : children) std::sort(c.begin(), c.end(), by_start);
  std::vector<ProcessNode> out;
  out.reserve(n);
  const std::function<void(std::size_t, std::size_t)> visit = [&](std::size_t i, std::size_t depth) {
    nodes[i].depth = depth;
    out.push_back(nodes[i]);
    for (const std::size_t c : children[i]) visit(c, depth + 1);
  };
  for (const std::size_t r : roots) visit(r, 0);
  return out;
}

}  // namespace memrec::analyzer
