// The MEMREC_* environment variables, read once at start (their names, defaults
// and meanings: memrec/preload/environment.h; the header of every dump records
// the values in force).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "memrec/format/file_header.h"

namespace memrec::preload {

inline constexpr int kDefaultMaxDepth = 128;
// A backtrace is held in a stack array inside malloc: keep it small enough for
// small thread stacks and signal stacks.
inline constexpr int kMaxDepthLimit = 256;

// MEMREC_STAMP (stamp_source.h).
enum class StampChoice : std::uint8_t { kAuto, kTsc, kCounter };

struct Options {
  char output[1024] = "memrec.%e.%p.dat";  // MEMREC_OUTPUT
  bool start_disabled = false;             // MEMREC_START_DISABLED
  int toggle_signal = 10;                  // MEMREC_SIGNAL: SIGUSR1; 0 = none
  int max_depth = kDefaultMaxDepth;        // MEMREC_MAX_DEPTH
  bool follow_exec = true;                 // MEMREC_FOLLOW_EXEC
  std::uint32_t rss_interval_ms = 100;     // MEMREC_RSS_INTERVAL_MS; 0 = off
  std::uint32_t flush_interval_ms = 1000;  // MEMREC_FLUSH_INTERVAL_MS, at most 1000
  bool lossy = false;                      // MEMREC_LOSSY
  int zstd_level = 0;                      // MEMREC_ZSTD_LEVEL: 1-19; 0 = auto (auto_level.h)
  char only[256] = "";                     // MEMREC_ONLY: a glob; empty = every process
  std::uint32_t writers = 0;               // MEMREC_WRITERS: 1-8; 0 = auto (writer_pool.h)
  StampChoice stamp = StampChoice::kAuto;  // MEMREC_STAMP
};

extern Options g_options;

// Reads the environment into g_options; prints one line per invalid value and
// keeps its default. Cold: getenv only, no allocation.
void read_options();

// The options as key/value text for the file header. `storage` holds the
// formatted numbers and must outlive the result.
struct OptionText {
  format::OptionPair pairs[12];
  char storage[12][24];
  std::size_t count = 0;
};
void describe_options(OptionText& out);

// Whether MEMREC_ONLY selects this process (always, when it is empty). Reads
// argv[0]'s name and /proc/self/exe: call it once libc has started.
bool selected_by_only();

}  // namespace memrec::preload
