// Which frame names a call site: its innermost frame of the program's own
// code, not of the allocator, the C library, the C++ or Rust standard library
// or memrec. The one place that decides it (by module, source path and name;
// the lists are in site_label.cpp and docs/analyzer.md). The report, the view,
// diff and the exports all label sites through here; the frames folded under
// the label stay in every backtrace.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "reports/call_sites.h"

namespace memrec::analyzer {

// Whether the frame is library code a site should not be named by.
bool is_library_frame(const SiteFrame& frame);

// The demangled name without its return type and parameter list, each
// template or generic argument list shortened to `<…>`:
// `void std::vector<int, std::allocator<int> >::push_back(int const&)`
// -> `std::vector<…>::push_back`. Unknown functions keep frame_label()'s text.
std::string short_function(std::string_view demangled);

// What a "via" names: the last two path elements of short_function(), without
// argument lists: `alloc::vec::Vec<T,A>::push` -> `Vec::push`,
// `<alloc::string::String as core::clone::Clone>::clone` -> `String::clone`.
std::string via_name(std::string_view demangled);

// Sets every site's label_frame from is_library_frame().
void label_sites(CallSites& sites);

// The position of the label frame in `frames` (a site's or one of its paths):
// the first that is not library code, 0 if none is or with raw_frames.
std::uint32_t label_position(const CallSites& sites, const SiteFrames& frames);

// Every site labelled by its innermost frame, as before labelling
// (`--raw-frames`): allocator frames name sites again.
void use_raw_frames(CallSites& sites);

// The frame that names `site` and, when library frames were folded under it,
// the via text (empty otherwise).
struct SiteLabel {
  std::uint32_t frame = 0;  // the label frame's position in site.frames
  std::string text;         // short_function() of that frame (frame_label() when unknown)
  std::string via;          // via_name() of the folded frame nearest to it; empty if none
};
SiteLabel site_label(const CallSites& sites, const CallSite& site);

// `--group label`: the sites whose label frame has the same function, file
// and line merged into one, with their figures summed. A merged site keeps
// the frames of its largest member (by allocated bytes) and lists every
// member's frames in `paths`; site_of_stack points at the merged sites.
// `group_of_site`, when given, gets each input site's merged index.
CallSites group_by_label(const CallSites& sites, std::vector<std::uint32_t>* group_of_site = nullptr);

}  // namespace memrec::analyzer
