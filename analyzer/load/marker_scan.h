// The markers of a dump, read before its events: a range given as
// `mark:LABEL` must be resolved to times before the events are replayed.
#pragma once

#include <string>
#include <vector>

#include "memrec/reader/records.h"
#include "memrec/reader/result.h"

namespace memrec::analyzer {

// Every Marker record of the dump at `path`, by time. A dump cut short gives
// the markers of its complete frames; a corrupt frame ends the scan there
// (the load that follows reports it).
Result<std::vector<reader::MarkerRecord>> scan_markers(const std::string& path);

}  // namespace memrec::analyzer
