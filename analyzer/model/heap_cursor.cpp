// Positions in the merged sequence are found by binary search (rows by
// allocation time, frees by free time), states by walking at most one
// checkpoint block; maxima over long stretches use the blocks' saved maxima.
#include "model/heap_cursor.h"

#include <algorithm>

namespace memrec::analyzer {
namespace {

constexpr std::uint32_t kC = AllocationTable::kCheckpointEvents;

// Advances by one event; returns true if it was an allocation.
bool step(const AllocationTable& t, EventCursor& c) {
  if (!t.is_alloc_at(c.position++)) {
    c.heap_bytes -= t.size(t.free_row(c.frees++));
    --c.live_count;
    return false;
  }
  c.heap_bytes += t.size(c.rows++);
  ++c.live_count;
  return true;
}

EventCursor from_checkpoint(const AllocationTable& t, std::size_t i) {
  const HeapCheckpoint& cp = t.checkpoints()[i];
  return EventCursor{std::uint64_t{i} * kC, cp.rows, cp.frees, cp.heap_bytes, cp.live_count};
}

}  // namespace

// Rows by the blocks' first times, then one block's times.
std::uint32_t rows_until(const AllocationTable& t, std::uint64_t time_ns) {
  return t.row_blocks().count_until(time_ns);
}

std::uint32_t frees_until(const AllocationTable& t, std::uint64_t time_ns) {
  return t.free_blocks().count_until(time_ns);
}

EventCursor seek_position(const AllocationTable& t, std::uint64_t position) {
  position = std::min(position, t.events());
  if (t.checkpoints().empty()) return {};
  EventCursor c = from_checkpoint(t, position / kC);
  while (c.position < position) step(t, c);
  return c;
}

EventCursor cursor_at(const AllocationTable& t, std::uint64_t time_ns) {
  return seek_position(t, std::uint64_t{rows_until(t, time_ns)} + frees_until(t, time_ns));
}

EventCursor cursor_before(const AllocationTable& t, std::uint64_t time_ns) {
  return time_ns == 0 ? EventCursor{} : cursor_at(t, time_ns - 1);
}

HeapMax heap_max(const AllocationTable& t, std::uint64_t from, std::uint64_t to, bool allocs_only,
                 std::uint64_t floor) {
  HeapMax best{false, floor, 0};
  to = std::min(to, t.events());
  if (from >= to) return best;
  EventCursor c = seek_position(t, from);
  while (c.position < to) {
    if (c.position % kC == 0 && c.position + kC <= to) {
      const std::size_t block = c.position / kC;
      const HeapCheckpoint& cp = t.checkpoints()[block];
      if (allocs_only) {
        if (cp.block_max_alloc_bytes > best.bytes)
          best = {true, cp.block_max_alloc_bytes, c.position + cp.block_max_alloc_at + 1};
      } else if (cp.block_max_bytes > best.bytes || !best.found) {
        best = {true, std::max(cp.block_max_bytes, best.bytes), 0};
      }
      c = from_checkpoint(t, block + 1);
      continue;
    }
    const bool alloc = step(t, c);
    if (allocs_only ? alloc && c.heap_bytes > best.bytes : (c.heap_bytes > best.bytes || !best.found)) {
      best = {true, std::max(c.heap_bytes, best.bytes), c.position};
    }
  }
  return best;
}

}  // namespace memrec::analyzer
