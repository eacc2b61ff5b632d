// Which allocations are the C and C++ runtime's own bookkeeping rather than
// the program's: decided by the function names of a call site's innermost
// frames. The list is in runtime_frames.cpp and in docs/analyzer.md.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace memrec::analyzer {

struct SiteFrame;

// How many innermost frames (inline frames included) are looked at.
inline constexpr std::size_t kRuntimeFramesLooked = 4;

// `__GI__IO_file_doallocate` -> `_IO_file_doallocate`.
std::string_view plain_name(std::string_view function);

// The runtime function among the first kRuntimeFramesLooked frames that makes
// the site runtime bookkeeping, if any.
std::optional<std::string_view> runtime_function(std::span<const SiteFrame* const> innermost_first);

}  // namespace memrec::analyzer
