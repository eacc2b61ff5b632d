// The descriptors the preload holds. Daemons close every descriptor they did
// not open (a loop over close(), or close_range) and then open files of their
// own, which would get our numbers: our dump would stop, or worse, our writes
// would land in their files. close() and close_range() are interposed to skip
// the descriptors registered here, and the long-lived ones are moved high,
// away from the numbers programs reuse and dup2() onto.
//
// That is the fallback. The writer thread normally gets a descriptor table of
// its own (use_private_descriptors): what it opens there is invisible to the
// program, takes none of its numbers even for a moment, and does not count
// against its RLIMIT_NOFILE (docs/design/descriptors.md).
#pragma once

namespace memrec::preload {

// Gives the calling thread a descriptor table of its own, holding none of the
// program's descriptors (close_range(CLOSE_RANGE_UNSHARE)), with /dev/null on
// 0, 1 and 2. False: the kernel refused (before 5.9, or a seccomp filter); the
// thread shares the program's table as before.
bool use_private_descriptors();
// Whether the calling thread has its own table.
bool has_private_descriptors();
// On a thread the writer started (a pool writer, which shares the writer's
// table): `shared` is has_private_descriptors() on the writer.
void share_private_descriptors(bool shared);
// A private-table thread's copy of the program's current stderr (pidfd_getfd),
// or -1; the caller closes it.
int borrow_program_stderr();
// The same for the program's descriptor `fd`: pidfd_getfd, else `fd` opened
// anew through /proc/self/fd with `reopen_flags`.
int borrow_program_fd(int fd, int reopen_flags);

// Opens `path` as a registered descriptor (a plain one in a private table). `high` moves it to a high number
// (for descriptors kept for the whole run).
int guarded_open(const char* path, int flags, int mode, bool high);
void guarded_close(int fd);
bool is_guarded(int fd);
// Registers or forgets a descriptor opened elsewhere.
bool own(int fd);
void disown(int fd);
// libunwind's pipe2() (its address validation, libunwind 1.6 x86_64/Ginit.c),
// which it makes once, when unwind_init() first calls it: moved above the
// floor, registered, and kept by fork children (a child that closed it would
// have libunwind reopen it on a program thread). Refused (EMFILE) unless
// allowed: only unwind_init() allows it, on the one thread the process has.
int unwinder_pipe(int fds[2], int flags);
void allow_unwinder_pipe(bool allowed);
// The lowest registered descriptor in [first, last], or -1.
long lowest_guarded_in(unsigned int first, unsigned int last);
// Fork child: the parent's descriptors are copies; forget and close them,
// but for libunwind's pipe.
void close_guarded_after_fork();

}  // namespace memrec::preload
