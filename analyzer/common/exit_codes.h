// The `memrec` command's exit codes, shared by every subcommand.
#pragma once

namespace memrec::analyzer {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUsage = 1;     // the command line is wrong
inline constexpr int kExitBadInput = 2;  // a file is missing, corrupt or not a dump
inline constexpr int kExitInternal = 3;  // a bug in memrec

}  // namespace memrec::analyzer
