// A columns payload's directory (FORMAT.md, "Columns"): the column count,
// each column's length, then the columns back to back. Shared by the column
// joiner, the column decoder and the frame time scan. Internal to the reader.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

#include "memrec/format/frame_columns.h"
#include "memrec/format/varint.h"

namespace memrec::reader::detail {

using ColumnSpans = std::array<std::span<const std::byte>, format::kColumnCount>;

// The columns of `payload`, a payload of `layout` after its layout byte
// (columns the layout does not have are empty); nothing when the directory
// does not describe it exactly.
inline std::optional<ColumnSpans> split_directory(std::span<const std::byte> payload, std::uint8_t layout) {
  const std::size_t count = format::column_count(layout);
  std::size_t pos = 0;
  const auto next = [&]() -> std::optional<std::uint64_t> {
    const auto v = format::get_varint(payload.subspan(pos));
    if (!v) return std::nullopt;
    pos += v->size;
    return v->value;
  };
  const auto n = next();
  if (!n || *n != count) return std::nullopt;
  std::array<std::uint64_t, format::kColumnCount> sizes{};
  for (std::size_t i = 0; i < count; ++i) {
    const auto v = next();
    if (!v || *v > payload.size()) return std::nullopt;
    sizes[i] = *v;
  }
  ColumnSpans columns;
  std::span<const std::byte> rest = payload.subspan(pos);
  for (std::size_t i = 0; i < count; ++i) {
    if (sizes[i] > rest.size()) return std::nullopt;
    columns[i] = rest.first(sizes[i]);
    rest = rest.subspan(sizes[i]);
  }
  if (!rest.empty()) return std::nullopt;
  return columns;
}

}  // namespace memrec::reader::detail
