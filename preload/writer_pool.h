// The pool of writers (docs/design/writer.md): beside the main writer
// (writer.cpp), up to kMaxWriters - 1 pool writers, each draining, coding and
// compressing the rings of its own list (g_buffers[w]) into frames it places
// in the dump itself (DumpFile::append). The main writer keeps everything
// else: definitions, notes, ticks and the lifecycle, and it drains every list
// whose pool writer does not run. A pool writer's frame waits for the main
// writer's frame that defines its stacks (FramePlacement). Only the main
// writer starts and stops pool writers; nothing here allocates.
#pragma once

#include <cstdint>

#include "event_coder.h"

namespace memrec::preload {

// How many lists new threads are dealt to (MEMREC_WRITERS, or auto: the
// CPUs less one, at least 4, at most kMaxWriters). At least 4 even on two
// CPUs: each writer then carries a share of the work that stays small
// whatever the thread count, which is what a machine with more CPUs turns
// into speed. From the constructor.
void pool_configure();

// Main writer: whether pool writer `w` runs (and so owns list w).
bool pool_runs(std::uint32_t w);
// Main writer: the pool writers running, for the count of the recorder's threads.
std::uint32_t pool_running();

// Main writer, between cycles: starts a pool writer for every list that has
// buffers and none. `handover` runs first when one starts: the main writer
// writes whole what it drained from that list, so that a thread's frames
// stay in its events' order in the file.
void pool_start_needed(void (*handover)());
// Main writer: every pool writer drains its rings, writes its frame whole
// and ends; joined, and gone from the kernel's thread list (as
// writer_park() needs). `serve` runs while it waits: the main writer places
// the stacks a last frame waits for.
void pool_stop_all(void (*serve)());

// Pool writer, before placing a frame that uses stacks below `end`: waits
// until a frame defining them is written (or a second passed, or the dump
// failed), asking the main writer for one.
void await_stacks_placed(std::uint32_t end);
// Main writer: a frame defining the stacks below `end` is in the file.
void note_stacks_placed(std::uint32_t end);
// Main writer: whether a pool writer waits for stacks to be placed.
bool stacks_wanted();

// The CPU time of recorder thread `w` so far, when called on it; 0 on any
// other thread.
std::uint64_t recorder_cpu_ns(std::uint32_t w);

// Drains the buffers of list `list` whose threads are gone into `coder`,
// unlinks and unmaps them (the writer that owns the list).
void retire_threads(EventCoder& coder, std::uint32_t list, std::uint64_t pid);

// In a fork child: no pool writer runs there; forget theirs.
void pool_reset_after_fork();

}  // namespace memrec::preload
