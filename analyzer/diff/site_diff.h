// `memrec diff` and memrec view's diff: compare two sets of call sites (two
// HeapReports, or a report's sites with a range's figures) site by site. Sites are
// matched by their symbolized frames (function, file name, line, inlined), never
// by addresses, module paths or the build's directory, so two builds of a program, or two runs with
// different ASLR layouts, compare. Frames whose function is unknown match by
// their label (module name + offset).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/window_figures.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

// The figures compared, per site and in total.
struct DiffFigures {
  std::uint64_t peak_bytes = 0;
  std::uint64_t leaked_bytes = 0;  // program sites only (runtime retention is not a leak)
  std::uint64_t leaked_count = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t allocations = 0;
  std::uint64_t temporary = 0;

  bool operator==(const DiffFigures&) const = default;
};

enum class SiteChange { kChanged, kNew, kVanished };

struct DiffFrame {
  std::string function;  // empty if unknown
  std::string file;
  std::uint32_t line = 0;
  bool inlined = false;
  std::string label;  // reports/call_sites.h frame_label
};

struct SiteDiff {
  std::vector<std::uint32_t> frames;  // into HeapDiff::frames, innermost first
  std::uint32_t label_frame = 0;      // the position in `frames` of the frame naming it (reports/site_label.h)
  SiteChange change = SiteChange::kChanged;
  bool runtime = false;
  DiffFigures base;
  DiffFigures next;
  // The first site of each side's CallSites with these frames (sites of one
  // side that match are summed): where the site can be shown.
  std::optional<std::uint32_t> base_site;
  std::optional<std::uint32_t> next_site;
  // Every site of each side with these frames, lowest first (memrec diff
  // --growth sums their live bytes).
  std::vector<std::uint32_t> base_sites;
  std::vector<std::uint32_t> next_sites;
};

struct HeapDiff {
  DiffFigures base_totals;
  DiffFigures next_totals;
  // Every distinct frame of both reports once, as the sites match them (a
  // frame of BASE and one of NEW that match are one); shown as first seen,
  // BASE's first. Sites hold indices, not copies: cc1plus's 155,000 sites
  // of ~61 frames copied as strings took 4.4 GB.
  std::vector<DiffFrame> frames;
  // Sites whose figures differ, new or vanished ones included; largest
  // change of leaked, then peak, then allocated bytes first.
  std::vector<SiteDiff> sites;
};

// One side of a diff: call sites and a figure set per site, which need not be
// the sites' own (memrec view's range figures are kept apart from its sites).
struct DiffSide {
  const CallSites* sites = nullptr;
  std::vector<DiffFigures> figures;  // by site of `sites`; a site whose figures are all 0 is not compared
  DiffFigures totals;
};

// The figure a metric names: peak, leaked, leaked-count, allocated,
// allocations, temporary (memrec diff --fail-if, memrec view's diff); nullopt for any other.
std::optional<std::uint64_t DiffFigures::*> diff_field(std::string_view metric);

// A site's figures as a diff compares them: a runtime site's retained bytes are no leak.
DiffFigures diff_figures(const SiteFigures& f, bool runtime);
// The report's sites with their own figures.
DiffSide diff_side(const HeapReport& r);

// `unchanged`: also list the sites whose figures are equal on both sides
// (kChanged; memrec diff --growth compares how they grew).
HeapDiff diff_sides(const DiffSide& base, const DiffSide& next, bool unchanged = false);
HeapDiff diff_reports(const HeapReport& base, const HeapReport& next);

// A changed site's label (reports/site_label.h) and the via of the frame
// folded under it ("" if none); the site has frames.
std::string diff_site_label(const HeapDiff& diff, const SiteDiff& site);
std::string diff_site_via(const HeapDiff& diff, const SiteDiff& site);

// next - base as a signed number.
inline std::int64_t change_of(std::uint64_t base, std::uint64_t next) {
  return static_cast<std::int64_t>(next) - static_cast<std::int64_t>(base);
}

}  // namespace memrec::analyzer
