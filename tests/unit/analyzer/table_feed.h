// Feeds an AllocationTableBuilder as memrec view does: each event goes
// through a StackReplay first, whose match (the row it released) is the
// builder's tag.
#pragma once

#include <cstdint>

#include "model/allocation_table.h"
#include "model/stack_replay.h"

namespace memrec::analyzer {

class TableFeed {
 public:
  explicit TableFeed(AllocationTableBuilder& builder) : builder_(builder) {}

  void operator()(const HeapEvent& e, std::uint32_t thread) {
    std::uint32_t released = kNoRow;
    replay_.on_events({&e, 1}, thread, {&released, 1});
    builder_.on_tagged_events({&e, 1}, {&released, 1}, thread);
  }

 private:
  AllocationTableBuilder& builder_;
  StackReplay replay_{TimeWindow{}};
};

}  // namespace memrec::analyzer
