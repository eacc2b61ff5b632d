// A bad pattern is kUsage, since the pattern is the user's. Lines are searched
// one by one so `^` and `$` anchor to a name.
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

Result<SitePattern> compile_match(const std::string& pattern) {
  RE2::Options options;
  options.set_log_errors(false);  // the error goes into our message, not to stderr
  auto re = std::make_unique<const RE2>(pattern, options);
  if (!re->ok()) return Error{ErrorCode::kUsage, "not a valid regular expression: " + re->error()};
  return SitePattern(std::move(re));
}

std::vector<bool> sites_matching(const std::vector<std::string>& texts, const SitePattern& re) {
  std::vector<bool> ok(texts.size(), false);
  for (std::size_t s = 0; s < texts.size(); ++s) {
    const std::string_view text = texts[s];
    for (std::size_t at = 0; at < text.size() && !ok[s];) {
      const std::size_t nl = text.find('\n', at);
      const std::size_t end = nl == std::string_view::npos ? text.size() : nl;
      ok[s] = RE2::PartialMatch(text.substr(at, end - at), *re);
      at = end + 1;
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
