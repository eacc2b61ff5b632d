// unshare(), setns() and clone(): the calls of launchers and sandboxes that
// need the process alone, or make a process without fork's atfork handlers.
// The kernel refuses unshare(CLONE_NEWUSER) and setns() into a user or mount
// namespace to a process with a second thread: our writer is parked (ended
// and joined) around them, and restarted after, whatever they returned
// (docs/design/single_threaded.md).
#include <sched.h>
#include <cerrno>
#include <cstdarg>

#include "lifecycle.h"
#include "real_allocator.h"
#include "thread_state.h"
#include "writer.h"

#define MEMREC_EXPORT __attribute__((visibility("default")))

namespace memrec::preload {
namespace {

// What a one-thread-only call would be refused with our writer running
// (unshare(2), setns(2): CLONE_NEWUSER implies CLONE_THREAD; a mount
// namespace needs an unshared fs_struct, which threads share). setns()
// with nstype 0 may join any namespace: counted in.
constexpr int kAloneForUnshare = CLONE_NEWUSER | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM;
constexpr int kAloneForSetns = CLONE_NEWUSER | CLONE_NEWNS;

template <typename Call>
int alone(Call&& call) {
  const bool parked = park_before_going_alone();
  const int result = call();
  if (parked) {
    const int saved = errno;
    writer_resume();
    errno = saved;
  }
  return result;
}

// A clone() that makes a process (neither CLONE_VM nor CLONE_THREAD) copies
// our state as fork() does, but runs no atfork handler (Chromium's
// base::ForkWithFlags): the child starts with the function below, which runs
// fork's child handler before the program's function. The parent's stack
// frame holding `Start` is copied into the child with the rest.
struct Start {
  int (*fn)(void*);
  void* arg;
};

int start_child(void* p) {
  const Start start = *static_cast<Start*>(p);
  after_fork_child();
  return start.fn(start.arg);
}

}  // namespace
}  // namespace memrec::preload

using namespace memrec::preload;

extern "C" {

MEMREC_EXPORT int unshare(int flags) {
  if (g_real.unshare == nullptr) early_init();
  if ((flags & kAloneForUnshare) == 0) return g_real.unshare(flags);
  return alone([&] { return g_real.unshare(flags); });
}

MEMREC_EXPORT int setns(int fd, int nstype) {
  if (g_real.setns == nullptr) early_init();
  if (nstype != 0 && (nstype & kAloneForSetns) == 0) return g_real.setns(fd, nstype);
  return alone([&] { return g_real.setns(fd, nstype); });
}

// glibc's clone(fn, stack, flags, arg, [parent_tid, tls, child_tid]): the
// three optional arguments are read whatever the flags, as glibc does.
MEMREC_EXPORT int clone(int (*fn)(void*), void* stack, int flags, void* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  void* parent_tid = va_arg(ap, void*);
  void* tls = va_arg(ap, void*);
  void* child_tid = va_arg(ap, void*);
  va_end(ap);
  if (g_real.clone == nullptr) early_init();
  if ((flags & (CLONE_VM | CLONE_THREAD)) != 0) return g_real.clone(fn, stack, flags, arg, parent_tid, tls, child_tid);
  Start start{fn, arg};
  before_fork();
  const int pid = g_real.clone(start_child, stack, flags, &start, parent_tid, tls, child_tid);
  const int saved = errno;
  after_fork_parent();
  errno = saved;
  return pid;
}

}  // extern "C"
