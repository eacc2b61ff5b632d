// The analyzer's compact form of a heap or anonymous-memory event: what the
// merge and the replay need, 32 bytes each. Realloc and Mremap records become
// a release followed by an acquisition, each at its own time.
#pragma once

#include <cstdint>

#include "memrec/reader/records.h"

namespace memrec::analyzer {

using reader::ModuleId;
using reader::StackId;

// Releases sort before acquisitions at equal times (FORMAT.md, "Order"), so
// the enumerators are in that order.
enum class HeapOp : std::uint8_t {
  kFree = 0,
  kMunmap = 1,
  kAlloc = 2,
  kMmap = 3,
};

constexpr bool is_release(HeapOp op) { return op == HeapOp::kFree || op == HeapOp::kMunmap; }
// The tie-break rank at equal times: 0 for releases, 1 for acquisitions.
constexpr int order_rank(HeapOp op) { return is_release(op) ? 0 : 1; }

struct HeapEvent {
  std::uint64_t time_ns = 0;
  std::uint64_t addr = 0;
  std::uint64_t size = 0;  // 0 for kFree
  StackId stack;
  HeapOp op = HeapOp::kAlloc;
  // Both halves of a Realloc record carry it, so a model that keeps
  // allocations (model/allocation_table.h) can link the old block to the new;
  // both halves of an Mremap too, so model/mapping_record.h tells them from
  // munmap and mmap calls.
  bool realloc = false;
};
static_assert(sizeof(HeapEvent) == 32, "HeapEvent is held once per event: keep it compact");

}  // namespace memrec::analyzer
