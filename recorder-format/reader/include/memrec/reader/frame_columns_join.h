// Rebuilds a columns frame's version-1 records from its columns (FORMAT.md,
// "Columns"; memrec/format/frame_columns.h splits them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "memrec/reader/result.h"

namespace memrec::reader {

// `payload` is a payload of `layout` (format::is_columns_layout)
// without its layout byte. Replaces `out` with the records; kCorrupt, naming
// `name` and `frame_offset`, when the columns do not rebuild exactly.
Status join_columns(std::span<const std::byte> payload, std::uint8_t layout, std::vector<std::byte>& out,
                    std::string_view name, std::uint64_t frame_offset);

}  // namespace memrec::reader
