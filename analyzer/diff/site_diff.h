// `memrec diff`: compares two HeapReports call site by call site. Sites are
// matched by their symbolized frames (function, file name, line, inlined), never
// by addresses, module paths or the build's directory, so two builds of a program, or two runs with
// different ASLR layouts, compare. Frames whose function is unknown match by
// their label (module name + offset).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reports/heap_report.h"

namespace memrec::analyzer {

// The figures compared, per site and in total.
struct DiffFigures {
  std::uint64_t peak_bytes = 0;
  std::uint64_t leaked_bytes = 0;  // program sites only (runtime retention is not a leak)
  std::uint64_t leaked_count = 0;
  std::uint64_t allocated_bytes = 0;
  std::uint64_t allocations = 0;

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
