// Groups allocation stacks into call sites by their *symbolized* frames, so
// that stacks that differ only in addresses within the same source lines (or
// that got two ids, FORMAT.md "Stack") count as one site. Built by the report
// from a StackReplay's columns; frames are interned, sites hold frame ids.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "load/loaded_dump.h"
#include "model/stack_replay.h"

namespace memrec::analyzer {

class Symbolizer;

// One source-level frame; inline frames are frames of their own.
struct SiteFrame {
  std::string function;  // demangled; empty if unknown
  std::string file;      // empty if unknown
  std::uint32_t line = 0;
  std::string module;               // empty if the address lies in no recorded module
  std::uint64_t module_offset = 0;  // the return address minus the module's bias (the first one seen)
  bool inlined = false;
};

struct CallSite {
  std::vector<std::uint32_t> frames;  // into CallSites::frames, innermost first
  bool truncated = false;             // a stack of it was cut at the recorder's max depth
  bool runtime = false;               // the runtime's own bookkeeping (runtime_frames.h)
  std::string runtime_function;       // the frame that made it so
  std::uint64_t allocations = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t temporary = 0;
  std::uint64_t leaked_bytes = 0;  // for a runtime site: retained, not leaked
  std::uint64_t leaked_count = 0;
  std::uint64_t peak_bytes = 0;
  std::uint32_t stack_ids = 0;  // how many recorded stacks merged into it
};

struct CallSites {
  std::vector<SiteFrame> frames;
  std::vector<CallSite> sites;
  // The site each symbolized stack id went into (stacks with a figure only):
  // for exports that replay events by stack (export/heaptrack.cpp).
  std::unordered_map<std::uint32_t, std::uint32_t> site_of_stack;
};

// Symbolizes every stack with a non-zero figure in `columns` (once per
// distinct address and module) and groups them.
CallSites build_call_sites(const LoadedDump& dump, const StackColumns& columns, Symbolizer& symbolizer);

// `function` or, when unknown, `module+0xoffset` / `0xaddress`.
std::string frame_label(const SiteFrame& frame);

}  // namespace memrec::analyzer
