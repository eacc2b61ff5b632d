// Interval bookkeeping for anonymous mappings. Ends saturate at 2^64 - 1 so
// a hostile size cannot wrap a range around the address space.
#include "model/mmap_ranges.h"

#include <algorithm>
#include <iterator>

namespace memrec::analyzer {
namespace {

std::uint64_t range_end(std::uint64_t addr, std::uint64_t size) { return size > ~0ull - addr ? ~0ull : addr + size; }

}  // namespace

void MmapRanges::map(std::uint64_t addr, std::uint64_t size, StackId stack, std::uint64_t mapped_ns,
                     std::vector<Cut>* cuts) {
  if (size == 0) return;
  unmap(addr, size, cuts);
  const std::uint64_t end = range_end(addr, size);
  ranges_[addr] = Mapping{end, stack, mapped_ns};
  live_bytes_ += end - addr;
}

std::uint64_t MmapRanges::unmap(std::uint64_t addr, std::uint64_t size, std::vector<Cut>* cuts) {
  if (size == 0) return 0;
  const std::uint64_t end = range_end(addr, size);
  // Start at the last mapping that begins at or before `addr`: it may reach into the range.
  auto it = ranges_.upper_bound(addr);
  if (it != ranges_.begin()) --it;
  std::uint64_t removed = 0;
  while (it != ranges_.end() && it->first < end) {
    const std::uint64_t start = it->first;
    const Mapping m = it->second;
    if (m.end <= addr) {
      ++it;
      continue;
    }
    it = ranges_.erase(it);
    // Keep the parts outside [addr, end).
    if (start < addr) ranges_[start] = Mapping{addr, m.stack, m.mapped_ns};
    if (m.end > end) it = ranges_.emplace(end, Mapping{m.end, m.stack, m.mapped_ns}).first;
    const std::uint64_t cut = std::min(m.end, end) - std::max(start, addr);
    removed += cut;
    if (cuts != nullptr) cuts->push_back(Cut{m.stack, cut});
  }
  live_bytes_ -= removed;
  return removed;
}

}  // namespace memrec::analyzer
