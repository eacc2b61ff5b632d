// Creating the dump file from the MEMREC_OUTPUT template: %p pid, %e the
// name it was run as (argv[0]'s last element), %t the start time (seconds since the epoch), %n a
// counter, %% a percent sign. Files are created 0600 and never overwritten:
// an existing name moves %n on, or gets ".N" before its extension.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memrec::preload {

// Opens a new file for writing. Returns the fd (O_CLOEXEC) and fills `path`,
// or returns -1 with errno set and `path` naming the last name tried.
int create_output(const char* tmpl, std::uint64_t pid, std::uint64_t start_s, char* path, std::size_t cap);

}  // namespace memrec::preload
