// Hands the allocator's free pages back to the system between a report's
// phases. memrec links mimalloc when it is found (analyzer/meson.build), and
// mimalloc keeps the pages that the exited decoding threads freed, for reuse
// that never comes: the report's peak is after loading (call sites, libdw's
// data), so they would stay resident (churn-1t: 58 -> 41 MB peak RSS).
#pragma once

// Weak: resolved to mimalloc's when memrec links it, null otherwise (unit
// tests, a build without mimalloc), so the core library needs no mimalloc.
extern "C" void mi_collect(bool force) __attribute__((weak));

namespace memrec::analyzer {

inline void return_free_pages() {
  if (mi_collect != nullptr) mi_collect(true);
}

}  // namespace memrec::analyzer
