// Runs `memrec diff BASE [NEW] [--json] [--fail-if T]...` once main() has
// parsed the arguments. One dump with two --from/--to ranges (or
// --base-from/--base-to and --new-from/--new-to) compares two ranges of the
// same recording; with two dumps, one range applies to both.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace memrec::analyzer {

inline constexpr int kExitThresholdCrossed = 4;  // a --fail-if threshold was crossed

// One --from/--to pair, as time specs (common/time_spec.h); absent: the start, the end.
struct DiffRange {
  std::optional<std::string> from;
  std::optional<std::string> to;
};

struct DiffOptions {
  std::vector<std::string> files;  // BASE and NEW, or one dump for two ranges
  bool json = false;
  std::size_t top = 20;                  // sites listed in the text output
  std::vector<std::string> fail_if;      // thresholds (diff/fail_if.h); each may hold several, comma-separated
  std::vector<DiffRange> ranges;         // in command-line order: both sides', or BASE's then NEW's
  std::optional<std::string> base_from;  // time specs (common/time_spec.h); instead of `ranges`
  std::optional<std::string> base_to;
  std::optional<std::string> new_from;
  std::optional<std::string> new_to;
  bool growth = false;                // compare each site's growth of live bytes (diff/growth_diff.h)
  std::optional<std::string> warmup;  // --growth's warm-up, a duration; default a tenth of each range
  std::vector<std::string> debug_dirs;
  unsigned threads = 0;
};

// kExitOk; kExitThresholdCrossed (after printing each reason on `err`);
// kExitUsage; kExitBadInput when a dump is missing or corrupt.
int run_diff(const DiffOptions& options, std::ostream& out, std::ostream& err);

}  // namespace memrec::analyzer
