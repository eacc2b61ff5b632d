// One pass over the sites: each site's path is its frames' labels from the
// label frame out; stamps (the add()'s number, by label) count a site once
// per function, caller and callee however often recursion repeats them.
#include "reports/caller_callee.h"

#include <algorithm>

namespace memrec::analyzer {

std::uint32_t CallerCallee::label(const CallSites& sites, std::uint32_t frame) {
  std::uint32_t& cached = label_of_frame_[frame];
  if (cached != 0) return cached - 1;
  std::string name = frame_label(sites.frames[frame]);
  const auto [it, inserted] = label_ids_.try_emplace(name, static_cast<std::uint32_t>(labels_.size()));
  if (inserted) {
    if (name == selected_ || (selected_key_ && name_key(name) == *selected_key_)) selected_id_ = it->second;
    labels_.push_back(std::move(name));
    functions_.emplace_back();
    seen_.push_back(0);
    seen_caller_.push_back(0);
    seen_callee_.push_back(0);
  }
  cached = it->second + 1;
  return it->second;
}

void CallerCallee::add_link(std::unordered_map<std::uint32_t, Link>& links, std::uint32_t label, std::uint64_t value) {
  Link& l = links.try_emplace(label, Link{label, 0, 0}).first->second;
  l.value += value;
  ++l.sites;
}

void CallerCallee::add(const CallSites& sites, const CallSite& site, std::uint64_t value) {
  if (&sites != labelled_) {
    labelled_ = &sites;
    label_of_frame_.assign(sites.frames.size(), 0);
  }
  path_.clear();
  std::uint32_t at = 0;
  for (const std::uint32_t f : site.frames) {
    if (at++ >= site.label_frame) path_.push_back(label(sites, f));
  }
  if (path_.empty()) return;
  const std::uint64_t stamp = ++adds_;
  Function& self = functions_[path_.front()];
  self.self += value;
  ++self.self_sites;
  for (std::size_t k = 0; k < path_.size(); ++k) {
    const std::uint32_t l = path_[k];
    if (seen_[l] != stamp) {
      seen_[l] = stamp;
      functions_[l].inclusive += value;
      ++functions_[l].inclusive_sites;
    }
    if (!selected_id_ || l != *selected_id_) continue;
    // path_ runs innermost first: the caller is further out, the callee further in.
    if (k + 1 < path_.size() && seen_caller_[path_[k + 1]] != stamp) {
      seen_caller_[path_[k + 1]] = stamp;
      add_link(callers_, path_[k + 1], value);
    }
    if (k > 0 && seen_callee_[path_[k - 1]] != stamp) {
      seen_callee_[path_[k - 1]] = stamp;
      add_link(callees_, path_[k - 1], value);
    }
  }
}

std::vector<CallerCallee::Link> CallerCallee::sorted(const std::unordered_map<std::uint32_t, Link>& links) const {
  std::vector<Link> out;
  out.reserve(links.size());
  for (const auto& [label, link] : links) out.push_back(link);
  std::sort(out.begin(), out.end(), [&](const Link& a, const Link& b) {
    if (a.value != b.value) return a.value > b.value;
    return labels_[a.label] < labels_[b.label];
  });
  return out;
}

}  // namespace memrec::analyzer
