// `memrec report --growth`: every call site's growth of live bytes over the
// range after a warm-up (model/site_growth.h), ranked by score; and
// `--retained`: what a span left live at an instant (model/retention.h). Both
// need the allocation table, which the report alone never builds: a second
// pass over the dump, as memrec view's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "load/dump_loader.h"
#include "memrec/reader/result.h"
#include "model/site_growth.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

// The table of `report`'s dump (a second pass, checked against the report),
// indexed by its call sites. `load.file_bytes` is set here to what the
// report read.
Result<AllocationTable> allocation_table_of(const HeapReport& report, LoadOptions load);

// The warm-up: `warmup_ns` after the range's start, else a tenth of the range.
GrowthRanking rank_growth(const HeapReport& report, const AllocationTable& table,
                          std::optional<std::uint64_t> warmup_ns);

// report --retained FROM..TO [--at AT]: times relative to the dump's start;
// AT defaults to TO.
RetentionReport rank_retained(const HeapReport& report, const AllocationTable& table, std::uint64_t from_ns,
                              std::uint64_t to_ns, std::optional<std::uint64_t> at_ns);

}  // namespace memrec::analyzer
