// The descriptors the preload holds. Daemons close every descriptor they did
// not open (a loop over close(), or close_range) and then open files of their
// own, which would get our numbers: our dump would stop, or worse, our writes
// would land in their files. close() and close_range() are interposed to skip
// the descriptors registered here, and the long-lived ones are moved high,
// away from the numbers programs reuse and dup2() onto.
#pragma once

namespace memrec::preload {

// Opens `path` as a registered descriptor. `high` moves it to a high number
// (for descriptors kept for the whole run).
int guarded_open(const char* path, int flags, int mode, bool high);
void guarded_close(int fd);
bool is_guarded(int fd);
// Registers or forgets a descriptor opened elsewhere (libunwind's pipe).
bool own(int fd);
void disown(int fd);
// The lowest registered descriptor in [first, last], or -1.
long lowest_guarded_in(unsigned int first, unsigned int last);
// Fork child: the parent's descriptors are copies; forget and close them.
void close_guarded_after_fork();

}  // namespace memrec::preload
