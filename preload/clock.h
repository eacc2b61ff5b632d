// The order stamp of every event: CLOCK_MONOTONIC in ns. glibc reads it through
// the vDSO without a syscall on the clock sources Linux uses on x86-64 and
// arm64 (tsc, kvm-clock, arch_sys_counter); the vDSO's own read barrier keeps
// the stamp ordered with the allocator call it follows or precedes.
#pragma once

#include <cstdint>
#include <ctime>

namespace memrec::preload {

inline std::uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The calling thread's CPU time. A syscall on most kernels (the vDSO serves
// only the global clocks): cold paths only.
inline std::uint64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

// The whole process's CPU time, every thread's: a syscall, cold paths only.
inline std::uint64_t process_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

inline std::uint64_t wall_ns() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace memrec::preload
