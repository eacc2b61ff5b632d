// The MEMREC_* environment variables libmemrec.so reads: the one list of their
// names, defaults and meanings. preload/options.cpp reads each by its entry
// here; `memrec help env` prints this table, and scripts/reference turns that
// output into docs/reference.md, the README's table and the man page.
// Header-only and constexpr: the preload includes it, so it must never allocate.
#pragma once

#include <string_view>

namespace memrec::preload {

struct EnvironmentVariable {
  const char* name;               // passed to getenv()
  std::string_view default_text;  // as a user would write it
  std::string_view header_key;    // the key under which the dump's header records the value
  std::string_view meaning;       // one paragraph; `memrec help env` wraps it
};

inline constexpr EnvironmentVariable kEnvOutput{
    "MEMREC_OUTPUT", "memrec.%e.%p.dat", "output",
    "Path template for the dump: %p is the pid, %e the name the program was run as (the last element of its "
    "argv[0], so a tool run through a symlink is named as called), %t the start time in seconds since "
    "1970, %n a counter that picks the first free name, and %% a percent sign. Dumps are created with mode "
    "0600 and never overwrite a file: without %n, a taken name gets .1, .2, ... before its extension. "
    "`memrec run` sets it from --output, made absolute."};
inline constexpr EnvironmentVariable kEnvStartDisabled{
    "MEMREC_START_DISABLED", "0", "start_disabled",
    "1 starts with recording off; the toggle signal (MEMREC_SIGNAL) switches it on. `memrec run` sets it from "
    "--start-disabled."};
inline constexpr EnvironmentVariable kEnvSignal{
    "MEMREC_SIGNAL", "SIGUSR1", "signal",
    "The signal that toggles recording: a name (USR1, SIGUSR2, HUP, URG, WINCH, PROF, VTALRM, RTMIN+N), a number, "
    "or none. The handler is installed when the program starts, and only if the signal is at its default action "
    "then; a handler the program installs later replaces it, and the signal then no longer toggles recording."};
inline constexpr EnvironmentVariable kEnvMaxDepth{"MEMREC_MAX_DEPTH", "128", "max_depth",
                                                  "The most frames kept per backtrace, 1-256."};
inline constexpr EnvironmentVariable kEnvFollowExec{
    "MEMREC_FOLLOW_EXEC", "1", "follow_exec",
    "1 keeps recording in children that exec (each writes its own dump). 0 removes the preload from the "
    "environment, so programs started by exec are not recorded."};
inline constexpr EnvironmentVariable kEnvRssIntervalMs{
    "MEMREC_RSS_INTERVAL_MS", "100", "rss_interval_ms",
    "How often the resident set size is sampled, in milliseconds, up to 3600000; 0 turns sampling off."};
inline constexpr EnvironmentVariable kEnvFlushIntervalMs{
    "MEMREC_FLUSH_INTERVAL_MS", "1000", "flush_interval_ms",
    "How long events may wait before they are written out, in milliseconds, 10-1000."};
inline constexpr EnvironmentVariable kEnvLossy{
    "MEMREC_LOSSY", "0", "lossy",
    "1 is an opt-in: when the writer falls behind, events are dropped instead of the program waiting for it, "
    "and the dump counts what was dropped. By default nothing is ever dropped."};
inline constexpr EnvironmentVariable kEnvZstdLevel{
    "MEMREC_ZSTD_LEVEL", "auto", "zstd_level",
    "The zstd compression level of the dump: auto, or 1-19. auto starts at 3 and goes up, to at most 12, while "
    "compressing a frame takes the writer thread less than an eighth of the time the program takes to fill one "
    "(a level more for each halving beyond), and down a level past a quarter; with one CPU it stays at 3. When "
    "the program waited for a writer whose compressing took more than a quarter, it goes down to 1 and climbs "
    "again from there."};

inline constexpr EnvironmentVariable kEnvOnly{
    "MEMREC_ONLY", "", "only",
    "A shell glob (fnmatch) naming the programs to record, e.g. python3 or 'python3*'. A process records only if "
    "the glob matches the name it was run as (the last element of its argv[0], as in %e) or the name of the file "
    "it runs (/proc/self/exe's last element). Any other process passes every call through, starts no writer "
    "thread and writes no dump, but keeps the preload and these variables for its children, which are matched in "
    "turn when they exec. Empty (the default) records every process. `memrec run` sets it from --only."};

inline constexpr EnvironmentVariable kEnvWriters{
    "MEMREC_WRITERS", "auto", "writers",
    "How many writer threads code and compress a process's events: auto, or 1-8. Each recording thread's events go "
    "to one of them, given in turn as threads start; auto is the number of CPUs less one, at least 4 and at most "
    "8, and a writer starts only once a thread is given to it, so a single-threaded program keeps one."};

inline constexpr EnvironmentVariable kEnvStamp{
    "MEMREC_STAMP", "auto", "stamp",
    "What orders events across threads: auto, tsc or counter. counter: a counter that every event of every "
    "recording thread increments, whose cache line moves between their cores. tsc: each event reads the CPU's "
    "time stamp counter, which the writers turn into ns; x86-64 only, and only where Linux's clocksource is "
    "tsc and the CPU has constant_tsc and nonstop_tsc, else the counter is used with a message. auto: tsc "
    "where it is trusted and a read costs at most 15 ns (timed at start), else counter. `memrec info --json` lists "
    "stamp_tsc: 1 among the counters when the TSC was used."};

inline constexpr EnvironmentVariable kEnvironment[] = {
    kEnvOutput,          kEnvStartDisabled, kEnvSignal,    kEnvMaxDepth, kEnvFollowExec, kEnvRssIntervalMs,
    kEnvFlushIntervalMs, kEnvLossy,         kEnvZstdLevel, kEnvOnly,     kEnvWriters,    kEnvStamp,
};

}  // namespace memrec::preload
