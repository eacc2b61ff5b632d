// The writer thread: drains every thread's ring, writes new stack and module
// definitions, encodes, compresses each frame with zstd and writes it to the
// dump. It never allocates (zstd works in a static context on mmap()ed
// memory), so a final flush can run while another thread is stopped inside
// malloc, e.g. from a signal handler.
#pragma once

#include <cstdint>
#include <string_view>

#include "memrec/format/records.h"

namespace memrec::preload {

// The writer starts when it is first needed, not with the program (see
// docs/design/single_threaded.md): a ring is full, a second thread records,
// or the process execs. Until then nothing is drained or ticked.
// writer_prepare() notes the process the dump is for, sets up the buffers
// and creates the dump with its header (the constructor); false if that
// failed (reported on stderr).
bool writer_prepare();
// Cold: sets up buffers and the compression context, creates the dump and
// starts the thread, once per process; stops the recording (reported on
// stderr) if that fails. Does nothing before the constructor chose to record.
[[gnu::cold, gnu::noinline]] void writer_start_lazily();
// Whether this process's writer was started (or its dump written without one).
bool writer_launched();

// HOT-PATH-SAFE. Wakes the main writer early (a ring is full).
void wake_writer();
// HOT-PATH-SAFE. Wakes the writer that drains list `list` (a ring of it is
// full): a pool writer's, or the main writer (writer_pool.h).
void wake_writer(std::uint32_t list);

// Drains everything, writes the final counters and End, closes the file.
// Waits at most `timeout_ns`. Async-signal-safe; idempotent. A process whose
// writer never started writes its dump on the calling thread.
void writer_finish(std::uint64_t timeout_ns);

// Writes everything recorded so far as a frame and waits for it (at most
// `timeout_ns`); recording goes on. Used before exec: if exec succeeds the
// file holds every event up to it.
void writer_sync(std::uint64_t timeout_ns);

// writer_sync(), ending the frame with an Exec record naming `path`: the
// process is about to exec it. If the exec returns, writer_note_exec_failed.
void writer_sync_before_exec(const char* path, std::uint64_t timeout_ns);

// The exec announced last returned with `error` at `time_ns`: the writer
// notes it (an Exec record with the errno) and the recording goes on.
// Async-signal-safe.
void writer_note_exec_failed(int error, std::uint64_t time_ns);

// The pid the current file belongs to. A vfork child shares our memory but
// not our pid, and must not end the parent's recording.
std::uint64_t recorded_pid();

// Before a call that needs the process to have one thread (unshare of a user
// namespace, setns): writes what is recorded, ends the writer thread and
// waits until the kernel no longer lists it. False if there was no writer to
// park (or it did not stop within `timeout_ns`); true obliges the caller to
// writer_resume() after the call. The program's other threads, if any, wait
// for room in their rings meanwhile.
bool writer_park(std::uint64_t timeout_ns);
// Starts a writer again after writer_park(), appending to the same dump.
void writer_resume();

// In a fork child, from the atfork handler: the parent's writer thread does
// not exist here. Forgets its state and starts a new writer for a new file.
void writer_restart_in_child();

// Writer thread (the control socket): a stamp unique among the events, for
// a command received now; lone threads stamping with ticks stamp after it.
std::uint64_t writer_control_stamp();
// Writer thread: writes a marker stamped now.
void writer_put_marker(format::Source source, std::string_view label);
// The dump's path, as opened.
const char* writer_dump_path();

// The CPU time of this process's main writer threads so far, when called on
// one (the writer ending a frame); 0 on any other thread, such as one that
// writes the dump of a process that never started its writer.
std::uint64_t writer_cpu_ns();

// Async-signal-safe: notes a pause or resume for the writer to record.
void note_recording_toggle(bool on, std::uint64_t time_ns, format::Source source);

}  // namespace memrec::preload
