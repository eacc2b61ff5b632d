// Groups allocation stacks into call sites by their *symbolized* frames, so
// that stacks that differ only in addresses within the same source lines (or
// that got two ids, FORMAT.md "Stack") count as one site. Built by the report
// from a StackReplay's columns; frames are interned, sites hold frame ids.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "load/loaded_dump.h"
#include "model/stack_replay.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer {

// One source-level frame; inline frames are frames of their own.
struct SiteFrame {
  std::string function;  // demangled; empty if unknown
  std::string file;      // empty if unknown
  std::uint32_t line = 0;
  std::string module;               // empty if the address lies in no recorded module
  std::uint64_t module_offset = 0;  // the return address minus the module's bias (the first one seen)
  bool inlined = false;
};

// The frame ids of a call site (into CallSites::frames), innermost first.
// build_call_sites makes each a view of one of the site's stacks: its
// innermost stack node and module generation, walked through the stack tree
// and each address's frame ids (FrameChains), so the 9.5 M ids of cc1plus's
// 155,000 sites are not stored once per site. A site made by hand (tests)
// holds its own ids. Walk it with begin()/end(); operator[] walks too.
// Copies share what they view; nothing changes it after construction.
class SiteFrames {
 public:
  struct Chains;  // shared and immutable; call_sites.cpp

  SiteFrames() = default;
  SiteFrames(std::initializer_list<std::uint32_t> ids) : SiteFrames(std::vector<std::uint32_t>(ids)) {}
  explicit SiteFrames(std::vector<std::uint32_t> ids);
  // A view of the stack with innermost node `leaf` in generation `stamp` (> 0).
  SiteFrames(std::shared_ptr<const Chains> chains, std::uint32_t leaf, std::uint32_t stamp, std::uint32_t size)
      : chains_(std::move(chains)), leaf_(leaf), stamp_(stamp), size_(size) {}

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = std::uint32_t;
    using difference_type = std::ptrdiff_t;
    using pointer = const std::uint32_t*;
    using reference = std::uint32_t;

    const_iterator() = default;
    std::uint32_t operator*() const { return *at_; }
    const_iterator& operator++();
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++*this;
      return old;
    }
    // The node too: a recursive stack walks one address's ids at several nodes.
    bool operator==(const const_iterator& o) const { return at_ == o.at_ && node_ == o.node_; }

   private:
    friend class SiteFrames;
    const Chains* chains_ = nullptr;  // null: `at_` walks a list of ids of its own
    std::uint32_t node_ = 0;          // the stack node whose ids [at_, run_end_) are being walked
    std::uint32_t stamp_ = 0;
    const std::uint32_t* at_ = nullptr;  // null at the end
    const std::uint32_t* run_end_ = nullptr;
    void settle();  // moves past empty runs; at the end, at_ = null
  };

  const_iterator begin() const;
  const_iterator end() const { return {}; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::uint32_t operator[](std::size_t i) const;
  std::vector<std::uint32_t> to_vector() const { return std::vector<std::uint32_t>(begin(), end()); }
  bool operator==(const SiteFrames& o) const { return size_ == o.size_ && std::equal(begin(), end(), o.begin()); }

 private:
  std::shared_ptr<const Chains> chains_;  // null when empty
  std::uint32_t leaf_ = 0;
  std::uint32_t stamp_ = 0;  // 0: the ids are chains_->ids, whole (a list made by hand)
  std::uint32_t size_ = 0;
};

struct CallSite {
  SiteFrames frames;             // into CallSites::frames, innermost first
  bool truncated = false;        // a stack of it was cut at the recorder's max depth
  bool runtime = false;          // the runtime's own bookkeeping (runtime_frames.h)
  std::string runtime_function;  // the frame that made it so
  std::uint64_t allocations = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t temporary = 0;
  std::uint64_t leaked_bytes = 0;  // for a runtime site: retained, not leaked
  std::uint64_t leaked_count = 0;
  std::uint64_t peak_bytes = 0;
  std::uint32_t stack_ids = 0;  // how many recorded stacks merged into it
  // The position in `frames` of the frame that names the site (site_label.h):
  // its innermost frame of the program's own code; 0 with --raw-frames.
  std::uint32_t label_frame = 0;
  // Set by group_by_label() only: the frames of each site merged into this one.
  std::vector<SiteFrames> paths;
};

struct CallSites {
  std::vector<SiteFrame> frames;
  std::vector<CallSite> sites;
  // The site each symbolized stack id went into (stacks with a figure only):
  // for exports that replay events by stack (export/heaptrack.cpp).
  std::unordered_map<std::uint32_t, std::uint32_t> site_of_stack;
  // Sites are labelled by their innermost frame, not the program's (site_label.h).
  bool raw_frames = false;
};

// What the symbolizer needs to know of a recorded module.
SymbolizeModule symbolize_module(const ModuleInfo& m);

// Symbolizes every stack with a non-zero figure in `columns` (once per
// distinct address and module) and groups them.
CallSites build_call_sites(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer);

// Adds stack `stack`'s figures in `columns` to `site`, and counts the stack.
void add_stack_figures(CallSite& site, const StackColumns& columns, std::size_t stack);

// `function` or, when unknown, `module+0xoffset` / `0xaddress`.
std::string frame_label(const SiteFrame& frame);

}  // namespace memrec::analyzer
