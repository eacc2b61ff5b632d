// Functions as heaptrack_gui's Caller/Callee tab shows them: each function's
// self value (its sites' label frame is it: the allocating function as the
// call trees define it) and inclusive value (the sites whose path from the
// label frame out contains it), and for one selected function its direct
// callers and callees. Built from the same per-site values and the same frame
// labels as the flamegraph (flame_tree.h), in one pass over the sites.
//
// Under recursion a site counts once per function, once per caller and once
// per callee of the selected function: `f -> f -> f -> g` adds its value to
// f's inclusive once, to "f called by f" once and to "f calls g" once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "reports/call_sites.h"

namespace memrec::analyzer {

// A name's key: FNV-1a (64 bits) of its bytes. A page selects a function by
// it when the whole name would not fit in a request line.
constexpr std::uint64_t name_key(std::string_view name) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  return h;
}

class CallerCallee {
 public:
  struct Function {
    std::uint64_t self = 0;
    std::uint64_t inclusive = 0;
    std::uint32_t self_sites = 0;  // sites adding to `self` / `inclusive`
    std::uint32_t inclusive_sites = 0;
  };
  struct Link {
    std::uint32_t label = 0;  // the caller or callee
    std::uint64_t value = 0;  // the sites' value through this link, each site once
    std::uint32_t sites = 0;
  };

  // `selected`: the frame label (frame_label()) whose callers and callees
  // add() collects, or its name_key(); empty for none.
  explicit CallerCallee(std::string selected = {}, std::optional<std::uint64_t> selected_key = std::nullopt)
      : selected_(std::move(selected)), selected_key_(selected_key) {}

  // Adds `value` for `site` of `sites`: its frames from the label frame out.
  // Sites of one CallSites are added together, before another's.
  void add(const CallSites& sites, const CallSite& site, std::uint64_t value);

  std::size_t size() const { return labels_.size(); }
  const std::string& name(std::uint32_t label) const { return labels_[label]; }
  const Function& function(std::uint32_t label) const { return functions_[label]; }
  // The selected function's label, once a site contained it.
  std::optional<std::uint32_t> selected() const { return selected_id_; }
  // Its direct callers and callees, largest value first, ties by name.
  std::vector<Link> callers() const { return sorted(callers_); }
  std::vector<Link> callees() const { return sorted(callees_); }

 private:
  std::uint32_t label(const CallSites& sites, std::uint32_t frame);
  static void add_link(std::unordered_map<std::uint32_t, Link>& links, std::uint32_t label, std::uint64_t value);
  std::vector<Link> sorted(const std::unordered_map<std::uint32_t, Link>& links) const;

  std::string selected_;
  std::optional<std::uint64_t> selected_key_;
  std::optional<std::uint32_t> selected_id_;
  std::vector<std::string> labels_;
  std::vector<Function> functions_;
  std::unordered_map<std::string, std::uint32_t> label_ids_;
  const CallSites* labelled_ = nullptr;
  std::vector<std::uint32_t> label_of_frame_;  // by frame of *labelled_: its label + 1, 0 until needed
  std::vector<std::uint64_t> seen_;            // by label: the add() that last counted it, so once per site
  std::vector<std::uint64_t> seen_caller_;     // the same for the selected function's callers and callees
  std::vector<std::uint64_t> seen_callee_;
  std::uint64_t adds_ = 0;
  std::vector<std::uint32_t> path_;  // scratch: add()'s labels, innermost first
  std::unordered_map<std::uint32_t, Link> callers_;
  std::unordered_map<std::uint32_t, Link> callees_;
};

}  // namespace memrec::analyzer
