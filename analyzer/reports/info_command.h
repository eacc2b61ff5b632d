// Runs `memrec info FILE... [--json]` once main() has parsed the arguments.
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace memrec::analyzer {

struct InfoOptions {
  std::vector<std::string> files;
  bool json = false;
  std::size_t top_leaks = 10;  // leak groups in the text output
  unsigned threads = 0;        // decoding threads; 0: automatic
};

// Writes the report of every file that loads to `out` (one JSON object, or an
// array for several files) and a one-line message per failed file to `err`.
// Returns kExitOk, or kExitBadInput / kExitInternal if a file failed.
int run_info(const InfoOptions& options, std::ostream& out, std::ostream& err);

}  // namespace memrec::analyzer
