// Follows a dump that is still being written: each step() reads only the
// frames appended since the last one, folds them into the same LoadedDump and
// hands the events that are safe to order on to the same sink (memrec view
// --follow; docs/design/follow.md). The file is only ever mapped read-only:
// the recorder writing it is never locked out, and a frame it has not
// finished writing is simply read at a later step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "load/dump_loader.h"
#include "load/loaded_dump.h"
#include "load/ordered_events.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

class EventReleaser;
class FrameFolder;

struct FollowOptions {
  LoadOptions load = {};
  // Events within this long of the latest event read stay held back: the
  // writer drains threads one after another and cuts a frame when it is
  // full, so the next frame may hold a thread's events older than this
  // frame's newest. An event older than what was already handed on arrives
  // too late: step() says so (FollowStep::out_of_order) and the caller
  // starts over. At least twice the recorder's flush interval (the
  // header's options), whatever is given here.
  std::uint64_t hold_back_ns = 1'000'000'000;
};

struct FollowStep {
  std::size_t frames = 0;      // frames read in this step
  std::uint64_t events = 0;    // events handed to the sink in this step
  bool out_of_order = false;   // a frame held an event older than one handed on: start over
  std::optional<Error> error;  // a complete frame that does not decode: following stops
};

class DumpFollower {
 public:
  // `sink` must outlive the follower; it sees events only inside step() and
  // finish(), on the caller's thread.
  DumpFollower(std::string path, FollowOptions options, OrderedEventSink& sink);
  ~DumpFollower();
  DumpFollower(const DumpFollower&) = delete;
  DumpFollower& operator=(const DumpFollower&) = delete;

  // Reads the frames appended since the last step. An error only when the
  // file cannot be opened or its header read (not yet written: try later).
  Result<FollowStep> step();
  // Hands on every held event: the dump ended (step() does this itself on
  // an End or Exec record) or its process is gone without one (a cut dump).
  void finish();

  // The metadata read so far (`streams` stays empty); valid between steps.
  const LoadedDump& dump() const { return stats_.dump; }
  // What stream_dump would say of the file as read so far, once finished.
  const StreamedDump& stats() const { return stats_; }
  bool finished() const { return finished_; }
  bool stopped() const { return stats_.stopped.has_value(); }
  std::uint64_t offset() const { return next_offset_; }  // where the next frame starts
  // Every event earlier than this has been handed on; later ones are held.
  std::uint64_t released_before() const { return released_before_; }

 private:
  void release(std::uint64_t bound);

  std::string path_;
  FollowOptions options_;
  OrderedEventSink& sink_;
  StreamedDump stats_;
  std::unique_ptr<EventReleaser> releaser_;
  std::unique_ptr<FrameFolder> folder_;
  std::uint64_t next_offset_ = 0;  // 0: the header is not read yet
  std::uint64_t released_before_ = 0;
  std::uint64_t hold_back_ns_ = 0;  // options_.hold_back_ns, or more for a slow flush
  bool finished_ = false;
};

}  // namespace memrec::analyzer
