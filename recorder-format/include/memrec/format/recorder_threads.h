// The counters of the recorder's own threads (FORMAT.md, "Counters"): two
// keys per thread from kRecorderThreadKeyBase, so that a reader that does
// not know them keeps them by number. Header-only and allocation-free: the
// preload writes them, `memrec info` shows them.
#pragma once

#include <cstdint>

namespace memrec::format {

// Recorder thread i (0: the writer) has key base + 2i for its CPU time in ns
// (CLOCK_THREAD_CPUTIME_ID, read by the thread itself when it ends a frame)
// and base + 2i + 1 for the events it coded.
inline constexpr std::uint64_t kRecorderThreadKeyBase = 128;
inline constexpr std::uint32_t kMaxRecorderThreads = 64;

constexpr std::uint64_t recorder_cpu_key(std::uint32_t thread) { return kRecorderThreadKeyBase + 2 * thread; }
constexpr std::uint64_t recorder_events_key(std::uint32_t thread) { return kRecorderThreadKeyBase + 2 * thread + 1; }

// Which recorder thread's counter `key` is, or -1 if it is none of theirs.
constexpr std::int64_t recorder_thread_of(std::uint64_t key) {
  if (key < kRecorderThreadKeyBase || key >= kRecorderThreadKeyBase + 2 * kMaxRecorderThreads) return -1;
  return static_cast<std::int64_t>((key - kRecorderThreadKeyBase) / 2);
}
constexpr bool is_recorder_events_key(std::uint64_t key) {
  return recorder_thread_of(key) >= 0 && (key - kRecorderThreadKeyBase) % 2 == 1;
}

}  // namespace memrec::format
