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
// Flushes what is recorded before an exec replaces the image.
void sync_before_exec();

}  // namespace memrec::preload
