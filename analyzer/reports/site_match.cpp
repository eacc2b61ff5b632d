// std::regex reports both a bad pattern and a search that exhausts its stack
// by throwing regex_error; both become kUsage here, since the pattern is the
// user's. Lines are searched one by one so `^` and `$` anchor to a name.
#include "reports/site_match.h"

namespace memrec::analyzer {

std::string site_match_text(const CallSites& sites, const CallSite& site) {
  std::string text;
  for (const std::uint32_t f : site.frames) {
    const SiteFrame& frame = sites.frames[f];
    if (!frame.function.empty()) text += frame.function + "\n";
    if (!frame.module.empty()) text += frame.module + "\n";
  }
  return text;
}

Result<std::regex> compile_match(const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return Error{ErrorCode::kUsage, std::string("not a valid regular expression: ") + e.what()};
  }
}

Result<std::vector<bool>> sites_matching(const std::vector<std::string>& texts, const std::regex& re) {
  std::vector<bool> ok(texts.size(), false);
  try {
    for (std::size_t s = 0; s < texts.size(); ++s) {
      const std::string_view text = texts[s];
      for (std::size_t at = 0; at < text.size() && !ok[s];) {
        const std::size_t nl = text.find('\n', at);
        const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
        ok[s] = std::regex_search(text.data() + at, text.data() + end, re);
        at = end + 1;
      }
    }
  } catch (const std::regex_error& e) {
    return Error{ErrorCode::kUsage, std::string("the regular expression is too complex to run: ") + e.what()};
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
