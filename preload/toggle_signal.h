// The toggle signal (MEMREC_SIGNAL) and what the program does with it. The
// lifecycle installs on_toggle_signal where the program left the default;
// the writer watches whether it stays installed, so that a dump whose toggle
// was taken over says so (docs/design/signals_and_exec.md, "The toggle
// taken over"). Watching only reads dispositions: it never changes one.
#pragma once

#include <cstdint>

namespace memrec::preload {

// The handler: flips recording on or off and notes it for the writer.
void on_toggle_signal(int sig);

// True while `handler` is the disposition of `sig`, installed without
// SA_SIGINFO (async-signal-safe: sigaction is on signal-safety(7)'s list).
bool handler_installed(int sig, void (*handler)(int));

// Writer thread: notes the first time it finds the toggle signal's handler
// not ours. Looks at most every few milliseconds, unless `now` is a frame's
// end (`force`), so a takeover just before exit is not missed.
void watch_toggle_signal(std::uint64_t now_ns, bool force = false);

// CLOCK_MONOTONIC ns when the watch first found the handler replaced; 0 if
// never. Kept across fork: the child inherits the program's handler.
std::uint64_t toggle_taken_ns();
// Toggle signals that reached on_toggle_signal while it was not the
// disposition: the program's handler passed them on, so the toggle worked.
std::uint64_t toggle_chained();

}  // namespace memrec::preload
