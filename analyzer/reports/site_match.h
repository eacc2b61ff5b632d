// The call-site conditions of a filter, shared by memrec view and `memrec
// export`: `match`, an ECMAScript regular expression searched in each of a
// site's frames' function names and module paths (the allocation table's
// "Function or library"), and `search`, a substring of a frame's label (the
// flamegraph's search box, which highlights frames by their labels).
#pragma once

#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "memrec/reader/result.h"
#include "reports/call_sites.h"

namespace memrec::analyzer {

// What `match` searches, one line each: the frames' functions and modules.
std::string site_match_text(const CallSites& sites, const CallSite& site);

// kUsage with a sentence naming the regex's fault when `pattern` is not one.
Result<std::regex> compile_match(const std::string& pattern);

// Per site of `texts` (site_match_text of each): whether some line has a match.
// A regex too complex for std::regex to run is kUsage too.
Result<std::vector<bool>> sites_matching(const std::vector<std::string>& texts, const std::regex& re);

// Per site: whether one of its frames' labels (frame_label) contains `text`.
std::vector<bool> sites_with_label(const CallSites& sites, std::string_view text);

}  // namespace memrec::analyzer
