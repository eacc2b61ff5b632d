// Loads one dump for the reports: opens it, decodes its frames in parallel
// and folds them, in file order, into a LoadedDump. A cut file loads up to its
// last complete frame; a corrupt one is an error naming the file and offset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "common/progress_bar.h"
#include "load/frame_collector.h"
#include "load/loaded_dump.h"
#include "memrec/reader/dump_reader.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

// The --threads option's help, the same for every command that loads dumps.
inline constexpr const char* kThreadsHelp =
    "decoding threads (0: one per core, at most 8); they run at nice +10, so that the one thread that replays "
    "the events in order keeps a core";

// A return address of the dump's stacks, the first time a stack uses it, and
// that stack's module generation.
struct StackAddress {
  std::uint64_t ip = 0;
  std::uint64_t module_gen = 0;
};

struct LoadOptions {
  unsigned threads = 0;  // decoding threads; 0: one per core, at most 8
  // Called on the loading thread after each frame is folded (frames done, of total).
  std::function<void(std::size_t, std::size_t)> progress = {};
  // stream_dump(): called instead of `progress` when set, with the bytes of
  // the file read and the events decoded so far (common/progress_bar.h).
  std::function<void(std::size_t, std::size_t, const LoadProgress&)> load_progress = {};
  // Called with the return addresses each frame's Stack records use for the
  // first time in the load, in file order, and the modules loaded as of that
  // frame, on the thread that builds the stack table (off the load's
  // critical path): for work that can start before the load ends, such as
  // symbolizing. An exception it throws fails the load.
  std::function<void(std::span<const ModuleInfo> modules, std::span<const StackAddress> addresses)> on_addresses = {};
  // stream_dump(path, …): when not 0, reads only the file's first
  // `file_bytes` (the size an earlier pass read: a dump still being written
  // has grown since).
  std::uint64_t file_bytes = 0;
  // stream_dump: how many held-back events stay in memory (32 bytes each);
  // past that a frame's events wait in an unlinked file in `spill_dir` (""
  // for $TMPDIR, else /var/tmp), and come back a share of this many at a time.
  std::uint64_t held_in_memory = std::uint64_t{1} << 20;
  std::string spill_dir = {};
};

Result<LoadedDump> load_dump(const std::string& path, const LoadOptions& options = {});
Result<LoadedDump> load_dump(reader::Dump dump, const LoadOptions& options = {});

// Receives each frame's heap events (by tid, each in that thread's order)
// once the frame's metadata is in `dump`, except its stacks: `dump.stacks` is
// filled on a thread of its own and may be read only once the load returns
// (every event names its stack by id; nothing needs the frames before the
// reports). It may move the events out.
using FrameEventsFn = std::function<void(const LoadedDump& dump, std::size_t frame, FrameData& data)>;

// Like load_dump, but hands the events to `on_events` instead of keeping
// them: LoadedDump::streams stays empty, so memory holds the metadata and the
// decoding window, whatever the dump's size. A frame that does not decode
// stops the load there: `partial` (if given) receives the error and the
// metadata read so far is returned; without `partial` the error is returned.
Result<LoadedDump> load_dump_streaming(reader::Dump dump, const LoadOptions& options, const FrameEventsFn& on_events,
                                       std::optional<Error>* partial = nullptr);

}  // namespace memrec::analyzer
