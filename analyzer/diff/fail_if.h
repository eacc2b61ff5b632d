// `memrec diff --fail-if`: thresholds that make the diff a CI gate.
//   METRIC>AMOUNT    the total grew by more than AMOUNT: bytes (`1MiB`, `500KB`,
//                    `4096`) or a share of the base (`5%`)
//   new-leak         a site leaks in NEW that leaked nothing in BASE
// METRIC: peak, leaked, leaked-count, allocated, allocations, temporary (diff_field).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diff/site_diff.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

struct Threshold {
  enum class Kind { kGrowth, kNewLeak } kind = Kind::kGrowth;
  std::string text;    // as given
  std::string metric;  // for kGrowth
  double amount = 0;   // bytes or count; percent when `percent`
  bool percent = false;
};

// kUsage with a sentence naming `text` when it is not a threshold.
Result<Threshold> parse_threshold(std::string_view text);

// Why `t` is crossed by `diff` (a sentence), or nullopt.
std::optional<std::string> crossed(const Threshold& t, const HeapDiff& diff);

}  // namespace memrec::analyzer
