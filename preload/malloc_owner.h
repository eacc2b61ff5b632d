// Whether the malloc the program calls is the recorder's. With another
// allocator ahead of libmemrec.so in LD_PRELOAD (or linked into the
// executable), the program's calls never reach our hooks and the dump would
// come out empty without a word: say so once at start, and in the dump.
#pragma once

#include <cstdint>

namespace memrec::preload {

// The constructor, once per process image: looks malloc up as the program
// does and, if it is not ours, prints one `memrec:` line naming its owner.
[[gnu::cold, gnu::noinline]] void check_malloc_owner();

// The address of the malloc the program calls when it is not ours, else 0
// (FORMAT.md, "Counters", key 16). Kept across fork, like the allocator.
std::uint64_t foreign_malloc();

}  // namespace memrec::preload
