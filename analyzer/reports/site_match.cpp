// A bad pattern is kUsage, since the pattern is the user's. Names are matched
// per interned frame, never joined into a text per site: cc1plus's 155,000
// sites of ~60 frames made a gigabyte of such text.
#include "reports/site_match.h"

#include <unordered_map>

namespace memrec::analyzer {

Result<SitePattern> compile_match(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error goes into our message, not to stderr
  auto re = std::make_unique<const RE2>(pattern, options);
  if (!re->ok()) return Error{ErrorCode::kUsage, "not a valid regular expression: " + re->error()};
  return SitePattern(std::move(re));
}

std::vector<bool> sites_matching(const CallSites& sites, const SitePattern& re) {
  // Each interned frame once, and each module path once: sites share most of
  // their frames, and all of them a few modules.
  std::unordered_map<std::string_view, bool> module_matches;
  std::vector<bool> frame_matches(sites.frames.size(), false);
  for (std::size_t f = 0; f < sites.frames.size(); ++f) {
    const SiteFrame& frame = sites.frames[f];
    if (!frame.function.empty() && RE2::PartialMatch(frame.function, *re)) {
      frame_matches[f] = true;
    } else if (!frame.module.empty()) {
      const auto [it, inserted] = module_matches.try_emplace(frame.module, false);
      if (inserted) it->second = RE2::PartialMatch(frame.module, *re);
      frame_matches[f] = it->second;
    }
  }
  std::vector<bool> ok(sites.sites.size(), false);
  for (std::size_t s = 0; s < sites.sites.size(); ++s) {
    for (const std::uint32_t f : sites.sites[s].frames) {
      if (frame_matches[f]) {
        ok[s] = true;
        break;
      }
    }
  }
  return ok;
}

std::vector<bool> sites_with_label(const CallSites& sites, std::string_view text) {
  std::vector<bool> ok(sites.sites.size(), false);
  for (std::size_t s = 0; s < sites.sites.size(); ++s) {
    for (const std::uint32_t f : sites.sites[s].frames) {
      if (frame_label(sites.frames[f]).find(text) != std::string::npos) {
        ok[s] = true;
        break;
      }
    }
  }
  return ok;
}

}  // namespace memrec::analyzer
