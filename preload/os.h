// The preload's narrow seam to the kernel for its own memory, waits and
// probes. Raw syscalls, so none of it passes through our own mmap hooks or any allocator.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace memrec::preload::os {

// Anonymous private read/write memory, or null. `noreserve` for large tables
// whose untouched pages should cost nothing.
void* map(std::size_t bytes, bool noreserve = false);
void unmap(void* p, std::size_t bytes);

// Waits while `*word == expected`, at most `timeout_ns` (0: no limit).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected, std::uint64_t timeout_ns);
void futex_wake_all(std::atomic<std::uint32_t>& word);

std::uint64_t gettid();

// How many of the `n` pages of `page_bytes` from `first` upwards can be read,
// up to the first that cannot; -1 if the kernel refuses the probe. The
// unwinder's way to find a thread's stack without reading /proc/self/maps,
// which would take a descriptor on a program thread (docs/design/descriptors.md).
long readable_pages(std::uintptr_t first, std::size_t n, std::uintptr_t page_bytes);

}  // namespace memrec::preload::os
