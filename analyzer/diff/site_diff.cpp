// Keys a frame by its text (files by name, not directory) and a site by its
// frames' keys; sites of one report that share a key (they differed only in
// module paths or addresses) are summed. Each distinct frame's text is made
// once, not once per site that has it.
#include "diff/site_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string_view>

#include "reports/site_label.h"

namespace memrec::analyzer {
namespace {

// A site's frames as indices into HeapDiff::frames, innermost first.
using SiteKey = std::vector<std::uint32_t>;

struct Keyed {
  bool runtime = false;
  std::uint32_t label_frame = 0;     // equal frames: the same label in both reports
  std::uint32_t first_site = 0;      // the lowest site id with this key
  std::vector<std::uint32_t> sites;  // every site id with this key
  DiffFigures figures;
};

// The file's last component: DWARF names files by the build's directory
// (absolute, or relative to it), which differs between two checkouts.
std::string_view file_name(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

void add(DiffFigures& a, const DiffFigures& b) {
  a.peak_bytes += b.peak_bytes;
  a.leaked_bytes += b.leaked_bytes;
  a.leaked_count += b.leaked_count;
  a.allocated_bytes += b.allocated_bytes;
  a.allocations += b.allocations;
  a.temporary += b.temporary;
}

// Interns the frames of both reports into one table by what a match
// compares, numbered in the order of that text, so that sites (keyed by their
// frames' numbers) sort by their frames' text and sites whose change is
// equal keep a stable, name-based order.
class FrameKeys {
 public:
  // Each frame of `cs`, by CallSites::frames index, as a provisional number;
  // renumber() makes it final.
  std::vector<std::uint32_t> add(const CallSites& cs) {
    std::vector<std::uint32_t> ids;
    ids.reserve(cs.frames.size());
    for (const SiteFrame& sf : cs.frames) {
      const std::string label = frame_label(sf);
      std::string key = sf.function.empty()
                            ? fmt::format("{}\x1f", label)
                            : fmt::format("{}\x1f{}\x1f{}\x1f{}", sf.function, file_name(sf.file), sf.line, sf.inlined);
      const auto [at, added] = index_.try_emplace(std::move(key), static_cast<std::uint32_t>(frames_.size()));
      if (added) frames_.push_back({sf.function, sf.file, sf.line, sf.inlined, label});
      ids.push_back(at->second);
    }
    return ids;
  }

  // The table in key order, and `ids` (what add() returned) numbered into it.
  std::vector<DiffFrame> renumber(std::initializer_list<std::vector<std::uint32_t>*> ids) {
    std::vector<std::uint32_t> rank(frames_.size());
    std::vector<DiffFrame> table;
    table.reserve(frames_.size());
    for (const auto& [key, id] : index_) {
      rank[id] = static_cast<std::uint32_t>(table.size());
      table.push_back(std::move(frames_[id]));
    }
    for (std::vector<std::uint32_t>* list : ids) {
      for (std::uint32_t& id : *list) id = rank[id];
    }
    return table;
  }

 private:
  std::map<std::string, std::uint32_t> index_;  // by key: the provisional number
  std::vector<DiffFrame> frames_;               // by provisional number
};

// `ids`: each of side.sites->frames' number in HeapDiff::frames.
std::map<SiteKey, Keyed> keyed_sites(const DiffSide& side, const std::vector<std::uint32_t>& ids) {
  std::map<SiteKey, Keyed> out;
  SiteKey key;
  const std::vector<CallSite>& sites = side.sites->sites;
  for (std::uint32_t id = 0; id < sites.size() && id < side.figures.size(); ++id) {
    // A range's figures cover every site of the dump, a report lists only
    // those with a figure: a site without one is on neither side's list.
    if (side.figures[id] == DiffFigures{}) continue;
    const CallSite& s = sites[id];
    key.clear();
    for (const std::uint32_t f : s.frames) key.push_back(ids[f]);
    const auto [at, added] = out.try_emplace(key);
    Keyed& k = at->second;
    if (added) k.first_site = id;
    k.sites.push_back(id);
    k.runtime = k.runtime || s.runtime;
    k.label_frame = s.label_frame;
    add(k.figures, side.figures[id]);
  }
  return out;
}

std::uint64_t magnitude(std::uint64_t a, std::uint64_t b) { return a > b ? a - b : b - a; }

}  // namespace

std::optional<std::uint64_t DiffFigures::*> diff_field(std::string_view metric) {
  if (metric == "peak") return &DiffFigures::peak_bytes;
  if (metric == "leaked") return &DiffFigures::leaked_bytes;
  if (metric == "leaked-count") return &DiffFigures::leaked_count;
  if (metric == "allocated") return &DiffFigures::allocated_bytes;
  if (metric == "allocations") return &DiffFigures::allocations;
  if (metric == "temporary") return &DiffFigures::temporary;
  return std::nullopt;
}

DiffFigures diff_figures(const SiteFigures& f, bool runtime) {
  return {f.peak_bytes, runtime ? 0 : f.leaked_bytes, runtime ? 0 : f.leaked_count, f.allocated_bytes, f.allocations,
          f.temporary};
}

DiffSide diff_side(const HeapReport& r) {
  DiffSide side;
  side.sites = &r.sites;
  side.figures.reserve(r.sites.sites.size());
  for (const CallSite& s : r.sites.sites) {
    side.figures.push_back(diff_figures(
        SiteFigures{s.allocations, s.allocated_bytes, s.temporary, s.leaked_bytes, s.leaked_count, s.peak_bytes},
        s.runtime));
  }
  side.totals = {r.totals.peak_bytes,      r.leaked_bytes,       r.leaked_count,
                 r.totals.allocated_bytes, r.totals.allocations, r.totals.temporary};
  return side;
}

HeapDiff diff_reports(const HeapReport& base, const HeapReport& next) {
  return diff_sides(diff_side(base), diff_side(next));
}

HeapDiff diff_sides(const DiffSide& base, const DiffSide& next, bool unchanged) {
  HeapDiff d;
  d.base_totals = base.totals;
  d.next_totals = next.totals;
  FrameKeys frame_keys;
  std::vector<std::uint32_t> base_ids = frame_keys.add(*base.sites);
  std::vector<std::uint32_t> next_ids = frame_keys.add(*next.sites);
  d.frames = frame_keys.renumber({&base_ids, &next_ids});
  auto b = keyed_sites(base, base_ids);
  auto n = keyed_sites(next, next_ids);
  for (auto& [key, site] : b) {
    const auto it = n.find(key);
    SiteDiff s;
    s.frames = key;
    s.label_frame = site.label_frame;
    s.runtime = site.runtime;
    s.base = site.figures;
    s.base_site = site.first_site;
    s.base_sites = std::move(site.sites);
    if (it == n.end()) {
      s.change = SiteChange::kVanished;
    } else {
      s.next = it->second.figures;
      s.next_site = it->second.first_site;
      s.next_sites = std::move(it->second.sites);
      s.runtime = s.runtime || it->second.runtime;
      n.erase(it);
      if (s.base == s.next && !unchanged) continue;
    }
    d.sites.push_back(std::move(s));
  }
  for (auto& [key, site] : n) {
    SiteDiff s;
    s.frames = key;
    s.label_frame = site.label_frame;
    s.runtime = site.runtime;
    s.next = site.figures;
    s.next_site = site.first_site;
    s.next_sites = std::move(site.sites);
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

std::string diff_site_label(const HeapDiff& diff, const SiteDiff& site) {
  const DiffFrame& f = diff.frames[site.frames[std::min<std::size_t>(site.label_frame, site.frames.size() - 1)]];
  return f.function.empty() ? f.label : short_function(f.function);
}

std::string diff_site_via(const HeapDiff& diff, const SiteDiff& site) {
  if (site.label_frame == 0 || site.label_frame >= site.frames.size()) return {};
  const DiffFrame& f = diff.frames[site.frames[site.label_frame - 1]];
  return f.function.empty() ? f.label : via_name(f.function);
}

}  // namespace memrec::analyzer
