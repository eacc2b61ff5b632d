// Lowers the calling thread's scheduling priority: for the threads that work
// ahead of a load's one serial thread (frame decoders, the symbol prefetch).
// On 2 cores a report runs four threads; with equal shares the serial replay,
// the slowest stage, got two thirds of a core and set the pace. At nice +10 it
// keeps a core and the helpers share the other, and they still run at full
// speed whenever the replay waits for them (churn's report: 0.29 -> 0.23 s).
// The stack table's builder keeps the load's priority (dump_loader.cpp).
#pragma once

#include <sys/resource.h>
#include <unistd.h>

namespace memrec::analyzer {

inline constexpr int kHelperNice = 10;

inline void lower_helper_priority() {
  // Linux applies PRIO_PROCESS with a thread id to that thread alone. A
  // failure (a seccomp sandbox) costs speed, never correctness.
  const int now = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
  if (now < kHelperNice) (void)setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), kHelperNice);
}

}  // namespace memrec::analyzer
