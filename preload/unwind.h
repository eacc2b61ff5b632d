// Backtraces with libunwind into a fixed array. The frames of libunwind and
// of the preload itself are cut off, so a stack starts at the caller of the
// allocation function.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memrec::preload {

struct Backtrace {
  std::size_t depth;
  bool truncated;
};

// Finds our own and libunwind's code ranges and sets libunwind's caching.
void unwind_init();

// Whether `pc` is in libunwind's code (its calls to pipe2 and close).
bool in_unwinder(std::uintptr_t pc);

// Room for libunwind's and our own frames, which are cut from the front.
inline constexpr std::size_t kUnwindOwnFrames = 8;

// HOT PATH. Fills `ips` (room for `max_depth + 1 + kUnwindOwnFrames`) and returns how many
// frames are the program's, and whether the stack was deeper than max_depth.
Backtrace capture_backtrace(std::uint64_t* ips, std::size_t max_depth);

}  // namespace memrec::preload
