// Held-back events that do not fit the load's memory budget, kept in an
// unlinked file instead (load/ordered_events.cpp). The merge holds back every
// event later than the earliest event some later frame holds; when the
// recorder drained thousands of threads behind their allocations, that was
// most of the dump (docs/design/thread_memory.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "load/heap_event.h"

namespace memrec::analyzer {

class EventSpill {
 public:
  // The file goes into `dir` ($TMPDIR, else /var/tmp: load/spill_buffer.h),
  // made on the first append.
  explicit EventSpill(std::string dir) : dir_(std::move(dir)) {}
  ~EventSpill();
  EventSpill(const EventSpill&) = delete;
  EventSpill& operator=(const EventSpill&) = delete;

  // Appends `events` and sets `offset` (counted in events) to where they
  // start. False when the file cannot be made or written (the disk is full):
  // the caller keeps the events in memory, and later appends fail too.
  bool append(std::span<const HeapEvent> events, std::uint64_t& offset);
  // Appends `count` events from `offset` to `out`. Throws std::runtime_error
  // if the file cannot be read back, which only a failing disk does.
  void read(std::uint64_t offset, std::size_t count, std::vector<HeapEvent>& out) const;
  // Gives the disk back for `count` events from `offset`, read back for
  // good: the whole pages within them become a hole (offsets stay valid).
  // A followed live dump spills and reads back for as long as it is
  // followed; without this the file grew with the recording's length.
  // Best effort: a file system without holes keeps the blocks.
  void discard(std::uint64_t offset, std::uint64_t count);

  std::uint64_t written() const { return written_; }

 private:
  std::string dir_;
  int fd_ = -1;
  bool failed_ = false;
  std::uint64_t written_ = 0;  // events
};

}  // namespace memrec::analyzer
