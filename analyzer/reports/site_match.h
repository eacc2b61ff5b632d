// The call-site conditions of a filter, shared by memrec view and `memrec
// export`: `match`, an RE2 regular expression searched in each of a
// site's frames' function names and module paths (the allocation table's
// "Function or library"), and `search`, a substring of a frame's label (the
// flamegraph's search box, which highlights frames by their labels).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <re2/re2.h>

#include "memrec/reader/result.h"
#include "reports/call_sites.h"

namespace memrec::analyzer {

// A compiled `match`. RE2 rather than std::regex: the pattern comes from the
// user and the names from the dump, and libstdc++'s backtracking recursion
// overflows the stack on a 100,000-character line and takes exponential time
// on patterns like `(a*)*b`; RE2 runs in time linear in the text.
using SitePattern = std::unique_ptr<const re2::RE2>;

// kUsage with a sentence naming the regex's fault when `pattern` is not one.
Result<SitePattern> compile_match(const std::string& pattern);

// Per site: whether `re` matches one of its frames' function names or module
// paths, each searched on its own (so `^` and `$` anchor to a name).
std::vector<bool> sites_matching(const CallSites& sites, const SitePattern& re);

// Per site: whether one of its frames' labels (frame_label) contains `text`.
std::vector<bool> sites_with_label(const CallSites& sites, std::string_view text);

}  // namespace memrec::analyzer
