// Parses the uncompressed file header at the front of a dump (FORMAT.md,
// "File header"). The allocating counterpart of format/file_header.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "memrec/reader/result.h"

namespace memrec::reader {

struct FileHeader {
  std::uint16_t version = 0;
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::uint64_t start_wall_ns = 0;  // CLOCK_REALTIME, ns since the Unix epoch
  std::uint64_t start_mono_ns = 0;  // CLOCK_MONOTONIC: the clock of every event time
  std::uint64_t page_size = 0;
  std::string exe_path;
  std::vector<std::string> cmdline;                          // split at the NULs
  std::vector<std::pair<std::string, std::string>> options;  // in file order
  std::size_t size_bytes = 0;                                // 16 + body length: where the first frame starts
};

// Errors: kBadMagic, kVersion (newer than this reader), kTruncatedHeader (the
// file ends inside the header), kCorrupt (the body does not decode). `name`
// starts every message.
Result<FileHeader> parse_file_header(std::span<const std::byte> file, std::string_view name);

// Splits /proc/PID/cmdline-style bytes: NUL-terminated arguments, the last
// terminator optional.
std::vector<std::string> split_cmdline(std::span<const std::byte> bytes);

}  // namespace memrec::reader
