// The vocabulary of the .dat format: file and frame constants, record tags,
// allocator functions and counter keys. FORMAT.md is the byte-level spec;
// every value here appears there, and changing one bumps kFormatVersion.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

namespace memrec::format {

inline constexpr std::array<char, 8> kFileMagic = {'M', 'E', 'M', 'R', 'E', 'C', 'D', 'T'};
inline constexpr std::uint16_t kFormatVersion = 9;
inline constexpr std::size_t kFileHeaderPrefixBytes = 16;  // magic, version, reserved, body length

// Every frame starts with "MRFZ", then u32 LE compressed and decompressed sizes.
inline constexpr std::array<char, 4> kFrameTag = {'M', 'R', 'F', 'Z'};
inline constexpr std::size_t kFrameEnvelopeBytes = 12;
// Limits a reader enforces so a corrupt size cannot make it allocate gigabytes.
inline constexpr std::uint32_t kMaxFrameBytes = 64u << 20;
inline constexpr std::uint32_t kMaxHeaderBodyBytes = 1u << 20;
inline constexpr std::uint32_t kMaxStackDepth = 1024;
inline constexpr std::uint32_t kMaxStringBytes = 64u << 10;

// First byte of every record inside a frame's payload.
enum class Tag : std::uint8_t {
  kThread = 0x01,   // varint tid: the thread of the events that follow
  kFree = 0x03,     // zz dt, zz daddr
  kRealloc = 0x04,  // u8 fn, zz dt, zz daddr_old, varint dt_alloc, zz daddr_new, varint size, zz dstack
  kMmap = 0x05,     // zz dt, zz daddr, varint size, varint prot, varint flags, zz dstack
  kMunmap = 0x06,   // zz dt, zz daddr, varint size
  kMremap = 0x07,   // zz dt, zz daddr_old, varint old_size, varint dt_alloc, zz daddr_new, varint new_size, zz dstack
  kStack = 0x08,    // varint id, varint module_gen, u8 flags, varint depth, depth x zz dip
  kModuleLoad = 0x09,    // varint id, varint gen, string path, varint bias, bytes build_id, varint n, n x segment
  kModuleUnload = 0x0a,  // varint id, varint gen
  kThreadStart = 0x0b,   // varint tid, zz dt, string name
  kThreadName = 0x0c,    // varint tid, string name
  kThreadExit = 0x0d,    // varint tid, zz dt
  kRss = 0x0e,           // zz dt, varint rss_bytes
  kRecording = 0x0f,     // zz dt, u8 on | source << 1 (version 7: the source)
  kCounters = 0x10,      // varint n, n x (varint key, varint value)
  kEnd = 0x11,           // zz dt: the clean end; nothing follows it
  kExec = 0x12,          // zz dt, varint error, string path: about to exec path (0), or that exec failed (errno)
  kMarker = 0x13,        // zz dt, u8 source, string label (version 7)
  kAllocBase = 0x20,     // 0x20 | AllocFn: zz dt, zz daddr, varint size, zz dstack
};
inline constexpr std::uint8_t kAllocTagMask = 0xf0;

// Which interposed function produced an allocation (low nibble of an alloc tag).
enum class AllocFn : std::uint8_t {
  kMalloc = 0,
  kCalloc = 1,
  kRealloc = 2,  // realloc(NULL, n)
  kReallocArray = 3,
  kMemalign = 4,
  kAlignedAlloc = 5,
  kPosixMemalign = 6,
  kValloc = 7,
  kPvalloc = 8,
};
inline constexpr std::uint8_t kAllocFnCount = 9;

constexpr std::string_view alloc_fn_name(AllocFn fn) {
  constexpr std::array<std::string_view, kAllocFnCount> names = {"malloc",         "calloc",   "realloc",
                                                                 "reallocarray",   "memalign", "aligned_alloc",
                                                                 "posix_memalign", "valloc",   "pvalloc"};
  const auto i = static_cast<std::uint8_t>(fn);
  return i < names.size() ? names[i] : std::string_view{"unknown"};
}

// Who started or stopped the recording, or set a marker (version 7). A
// Recording record of an older version reads as kSignal: the toggle signal
// was the only way then.
enum class Source : std::uint8_t {
  kSignal = 0,  // the toggle signal (MEMREC_SIGNAL, SIGUSR1 by default)
  kCtl = 1,     // `memrec ctl` through the control socket
  kApi = 2,     // the program called memrec_mark()
  kStart = 3,   // the recording began paused: MEMREC_START_DISABLED, or the fork child of a paused process
};
inline constexpr std::uint8_t kSourceCount = 4;

constexpr std::string_view source_name(Source s) {
  constexpr std::array<std::string_view, kSourceCount> names = {"signal", "ctl", "api", "start"};
  const auto i = static_cast<std::uint8_t>(s);
  return i < names.size() ? names[i] : std::string_view{"unknown"};
}

// The longest marker label the recorder writes; memrec_mark() cuts longer
// ones (FORMAT.md, "Marker").
inline constexpr std::size_t kMaxMarkerLabelBytes = 255;

// Stack record flag bits.
inline constexpr std::uint8_t kStackTruncated = 0x01;  // deeper than the recorder's max depth
// Version 4: the record holds only the frames inside those it shares with the
// frame's previous Stack record (FORMAT.md, "Records").
inline constexpr std::uint8_t kStackShared = 0x02;

// Module segment flag bits (the ELF p_flags it was loaded with).
inline constexpr std::uint8_t kSegmentExec = 0x01;
inline constexpr std::uint8_t kSegmentWrite = 0x02;
inline constexpr std::uint8_t kSegmentRead = 0x04;

// The recorder's counters (kCounters). Keys are stable; readers keep keys they
// do not know by number.
enum class Counter : std::uint8_t {
  kEvents = 1,              // events written to the file
  kMissedReentrant = 2,     // program allocations passed through while a hook was active (signal handlers)
  kMissedNoBuffer = 3,      // passed through: a thread buffer could not be mapped
  kMissedStopped = 4,       // passed through after recording stopped on an error
  kDroppedLossy = 5,        // dropped in the opt-in lossy mode (MEMREC_LOSSY=1)
  kBackpressureWaits = 6,   // times a thread waited for the writer
  kBackpressureWaitNs = 7,  // total time spent waiting
  kStacks = 8,              // distinct stacks
  kTruncatedStacks = 9,     // stacks cut at the max depth
  kStackTableFull = 10,     // events recorded with stack id 0 because the stack table was full
  kBootstrapAllocs = 11,    // allocations served before the real allocator was found
  kFrames = 12,             // frames written, this one included
  kBytesWritten = 13,       // compressed bytes written before this frame
  kThreads = 14,            // threads seen
  kUnwindFailed = 15,       // events recorded with stack id 0 because libunwind returned no frame
  // Facts, not counts; written only once set (FORMAT.md, "Counters").
  kForeignMalloc = 16,  // the address of the malloc the program calls, when it is not the recorder's
  kToggleTakenNs = 17,  // when the recorder found its toggle signal's handler replaced by the program's
  kToggleChained = 18,  // toggle signals that reached the recorder through the program's handler
  kMarkersLost = 19,    // memrec_mark() calls not recorded: made inside a hook (a signal handler), or no ring
  kWriter = 20,         // the writer thread whose counts these are (version 9); absent: 0, the main writer
  kStampTsc = 21,       // 1: events were ordered by the TSC, not the shared counter (MEMREC_STAMP)
  kTscReadNs = 22,      // the cost of one fenced TSC read, timed at start (when the TSC was considered)
};

}  // namespace memrec::format
