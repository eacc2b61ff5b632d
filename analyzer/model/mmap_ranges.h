// The live anonymous mappings as a set of disjoint address ranges. A munmap
// may cover part of a mapping, several mappings, or none (FORMAT.md: a reader
// subtracts only what overlaps a mapping it knows).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "load/heap_event.h"

namespace memrec::analyzer {

class MmapRanges {
 public:
  struct Mapping {
    std::uint64_t end = 0;  // exclusive
    StackId stack;
    std::uint64_t mapped_ns = 0;  // when it was mapped; the pieces of a split keep it
  };
  // Bytes that an unmap (or a map over them) took from a mapping of `stack`.
  struct Cut {
    StackId stack;
    std::uint64_t bytes = 0;
  };

  // Maps [addr, addr + size); whatever it overlaps is replaced, as a
  // MAP_FIXED mapping replaces the pages under it. With `cuts`, appends what
  // the replaced mappings lost.
  void map(std::uint64_t addr, std::uint64_t size, StackId stack, std::uint64_t mapped_ns = 0,
           std::vector<Cut>* cuts = nullptr);
  // Unmaps [addr, addr + size); returns the bytes that were live in it. With
  // `cuts`, appends each overlapped mapping's loss.
  std::uint64_t unmap(std::uint64_t addr, std::uint64_t size, std::vector<Cut>* cuts = nullptr);

  std::uint64_t live_bytes() const { return live_bytes_; }
  std::uint64_t live_count() const { return ranges_.size(); }
  const std::map<std::uint64_t, Mapping>& ranges() const { return ranges_; }

 private:
  std::map<std::uint64_t, Mapping> ranges_;  // by start address
  std::uint64_t live_bytes_ = 0;
};

}  // namespace memrec::analyzer
