// Keys a site by the text of its frames (files by name, not directory); sites of one report that share a
// key (they differed only in module paths or addresses) are summed.
#include "diff/site_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string_view>

namespace memrec::analyzer {
namespace {

struct Keyed {
  std::vector<DiffFrame> frames;
  bool runtime = false;
  DiffFigures figures;
};

// The file's last component: DWARF names files by the build's directory
// (absolute, or relative to it), which differs between two checkouts.
std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

DiffFigures figures_of(const CallSite& s) {
  return {s.peak_bytes, s.runtime ? 0 : s.leaked_bytes, s.runtime ? 0 : s.leaked_count, s.allocated_bytes,
          s.allocations};
}

void add(DiffFigures& a, const DiffFigures& b) {
  a.peak_bytes += b.peak_bytes;
  a.leaked_bytes += b.leaked_bytes;
  a.leaked_count += b.leaked_count;
  a.allocated_bytes += b.allocated_bytes;
  a.allocations += b.allocations;
}

std::map<std::string, Keyed> keyed_sites(const HeapReport& r) {
  std::map<std::string, Keyed> out;
  for (const CallSite& s : r.sites.sites) {
    std::string key;
    std::vector<DiffFrame> frames;
    for (const std::uint32_t f : s.frames) {
      const SiteFrame& sf = r.sites.frames[f];
      DiffFrame d{sf.function, sf.file, sf.line, sf.inlined, frame_label(sf)};
      key += sf.function.empty()
                 ? fmt::format("{}\x1f", d.label)
                 : fmt::format("{}\x1f{}\x1f{}\x1f{}\x1e", sf.function, file_name(sf.file), sf.line, sf.inlined);
      frames.push_back(std::move(d));
    }
    Keyed& k = out[key];
    if (k.frames.empty()) k.frames = std::move(frames);
    k.runtime = k.runtime || s.runtime;
    add(k.figures, figures_of(s));
  }
  return out;
}

DiffFigures totals_of(const HeapReport& r) {
  return {r.totals.peak_bytes, r.leaked_bytes, r.leaked_count, r.totals.allocated_bytes, r.totals.allocations};
}

std::uint64_t magnitude(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

HeapDiff diff_reports(const HeapReport& base, const HeapReport& next) {
  HeapDiff d;
  d.base_totals = totals_of(base);
  d.next_totals = totals_of(next);
  const auto b = keyed_sites(base);
  auto n = keyed_sites(next);
  for (const auto& [key, site] : b) {
    const auto it = n.find(key);
    SiteDiff s;
    s.frames = site.frames;
    s.runtime = site.runtime;
    s.base = site.figures;
    if (it == n.end()) {
      s.change = SiteChange::kVanished;
    } else {
      s.next = it->second.figures;
      s.runtime = s.runtime || it->second.runtime;
      n.erase(it);
      if (s.base == s.next) continue;
    }
    d.sites.push_back(std::move(s));
  }
  for (auto& [key, site] : n) {
    SiteDiff s;
    s.frames = std::move(site.frames);
    s.runtime = site.runtime;
    s.next = site.figures;
    s.change = SiteChange::kNew;
    d.sites.push_back(std::move(s));
  }
  std::stable_sort(d.sites.begin(), d.sites.end(), [](const SiteDiff& x, const SiteDiff& y) {
    const auto rank = [](const SiteDiff& s) {
      return std::tuple(magnitude(s.base.leaked_bytes, s.next.leaked_bytes),
                        magnitude(s.base.peak_bytes, s.next.peak_bytes),
                        magnitude(s.base.allocated_bytes, s.next.allocated_bytes));
    };
    return rank(x) > rank(y);
  });
  return d;
}

}  // namespace memrec::analyzer
