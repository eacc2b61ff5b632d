// How the text outputs write sizes and changes: "12.4 KiB", "+3.3 KiB",
// "+166.7%". The JSON outputs keep exact bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace memrec::analyzer {

// Bytes below 1 KiB exactly, else KiB, MiB or GiB with one or two decimals.
std::string size_text(std::uint64_t bytes);
// A change in bytes with its sign ("+3.3 KiB", "-200 B", "0 B").
std::string signed_size_text(std::int64_t bytes);
// A change in a count with its sign ("+1", "-20", "0").
std::string signed_count_text(std::int64_t n);
// The change from `base` to `next` in percent ("+166.7%", "-50.0%"), "new"
// from zero, empty when both are zero.
std::string percent_text(std::uint64_t base, std::uint64_t next);
// "1 block", "2 blocks".
std::string count_of(std::uint64_t n, std::string_view noun);

}  // namespace memrec::analyzer
