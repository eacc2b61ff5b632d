// Process-wide recording state shared by the hooks, the writer and the
// lifecycle code. Hooks only read these with relaxed loads; the counters are
// bumped on cold paths only.
#pragma once

#include <atomic>
#include <cstdint>

#include "memrec/format/records.h"

namespace memrec::preload {

enum class RecorderState : std::uint8_t {
  kEarly,      // before our constructor: events are buffered, nobody drains yet
  kRecording,  // the writer runs
  kStopped,    // an error stopped recording; hooks pass through and count
  kFinished,   // the file was closed at exit or exec
  kIgnored,    // MEMREC_ONLY does not name this program: hooks pass through, no writer, no dump
};

extern std::atomic<RecorderState> g_state;
// Recording on/off (the toggle signal). Frees are recorded either way.
extern std::atomic<bool> g_enabled;

// HOT PATH. Whether allocations are recorded now.
inline bool recording_allocs() {
  return g_enabled.load(std::memory_order_relaxed) &&
         g_state.load(std::memory_order_relaxed) <= RecorderState::kRecording;
}
// HOT PATH. Whether frees are recorded now.
inline bool recording_frees() { return g_state.load(std::memory_order_relaxed) <= RecorderState::kRecording; }

inline constexpr int kCounterSlots = 20;
extern std::atomic<std::uint64_t> g_counters[kCounterSlots];

inline void count(format::Counter c, std::uint64_t n = 1) {
  g_counters[static_cast<int>(c)].fetch_add(n, std::memory_order_relaxed);
}
inline std::uint64_t counter(format::Counter c) {
  return g_counters[static_cast<int>(c)].load(std::memory_order_relaxed);
}

// A hook reached inside another of ours (HookScope::active()): counts a
// program allocation or free that passes through unrecorded while
// `recording`, or notes the hit of a probe (HookDepth::kProbe) whatever the
// state, since operator new is tried before recording may start.
[[gnu::cold, gnu::noinline]] void count_miss(bool recording = true);
// An allocation reached inside one of our scopes: remembered under
// HookDepth::kLibdl, else count_miss().
[[gnu::cold, gnu::noinline]] void note_nested_alloc(const void* p);
// A free reached inside one of our scopes: under HookDepth::kLibdl recorded,
// unless note_nested_alloc() remembered the block; else count_miss().
[[gnu::cold, gnu::noinline]] void record_nested_free(const void* p);

}  // namespace memrec::preload
