// Start, stop, fork, exec, exit and signals: everything that decides when a
// dump begins and ends. See lifecycle.cpp.
#pragma once

namespace memrec::preload {

// The first hook or the constructor, whichever comes first: finds the real
// allocator and reads the options. Idempotent.
[[gnu::cold, gnu::noinline]] void early_init();
bool early_init_done();

// Flushes and closes the dump before the process image goes away (_exit),
// unless this is a vfork child sharing our memory.
void finish_before_exit();
// Before an exec of `path` replaces the image: writes what is recorded and an
// Exec record (FORMAT.md, "Exec"). False if this process does not record
// (a vfork child, recording stopped): nothing to note if the exec fails.
bool sync_before_exec(const char* path);
// The exec announced by sync_before_exec() returned, failing with `error`:
// the dump notes it and the recording goes on.
void note_exec_failed(int error);

// Before a call the kernel refuses to a process with more than one thread
// (unshare or setns of a user namespace): parks the writer (writer_park).
// True obliges the caller to writer_resume() after the call.
bool park_before_going_alone();

// The atfork handlers, also run around a clone() that makes a process.
void before_fork();
void after_fork_parent();
void after_fork_child();

}  // namespace memrec::preload
