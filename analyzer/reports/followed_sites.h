// The call sites of a dump that is still being written (memrec view
// --follow): each poll symbolizes and places only the stacks that got their
// first figure since the last one; every other stack keeps the site it went
// into. A site keeps its index for the whole follow (the page's open row and
// the allocation table name sites by it), new sites come after the old ones.
// The sites, their frames and labels equal build_call_sites' of the same
// columns; only their order may differ (build_call_sites orders them by stack id).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "load/loaded_dump.h"
#include "model/stack_replay.h"
#include "reports/call_sites.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

class FollowedSites {
 public:
  // Places the stacks of `columns` with a figure that no earlier call placed
  // (symbolizing the addresses no earlier call saw), then sets every site's
  // figures from `columns`. `dump` holds the stacks read so far.
  const CallSites& update(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer);
  const CallSites& sites() const { return out_; }
  // Each site's label text (site_label.h), made once per site.
  const std::vector<std::string>& labels() const { return labels_; }
  // How many stacks update() has placed in all: the work it did, for tests.
  std::size_t placed_stacks() const { return placed_.size(); }

 private:
  struct PairHash {
    std::size_t operator()(const std::pair<std::uint64_t, std::uint64_t>& k) const {
      return std::hash<std::uint64_t>{}(k.first * 0x9e3779b97f4a7c15ull ^ k.second);
    }
  };
  struct IdsHash {
    std::size_t operator()(const std::vector<std::uint32_t>& ids) const;
  };
  using GenIp = std::pair<std::uint64_t, std::uint64_t>;  // (module generation, return address)

  void symbolize_new(const LoadedDump& dump, const std::vector<GenIp>& unseen, Symbolizer& symbolizer);
  std::uint32_t frame(SiteFrame f);
  std::uint32_t site_of(std::vector<std::uint32_t> ids);

  CallSites out_;
  std::vector<std::string> labels_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> placed_;                // (stack id, site), each stack once
  std::vector<bool> is_placed_;                                                // by stack id
  std::unordered_map<GenIp, std::vector<std::uint32_t>, PairHash> frames_of_;  // an address's frame ids
  std::unordered_map<std::string, std::uint32_t> frame_ids_;  // a frame's identity (frame_key) -> its id
  std::unordered_map<std::vector<std::uint32_t>, std::uint32_t, IdsHash> site_ids_;  // frame ids -> site
};

}  // namespace memrec::analyzer
