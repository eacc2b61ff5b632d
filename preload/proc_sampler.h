// What the writer reads from /proc: the process's RSS, its threads' names and
// count, its command line. Writer thread (or the thread finishing a process
// without one) only; its descriptors are guarded (fd_guard.h), and nothing
// here allocates.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memrec::preload {

class ProcSampler {
 public:
  // Timers start at `now` (the recording's start).
  void start(std::uint64_t now) { last_names_ns_ = now; }

  // Whether an RSS sample is due at `now` (MEMREC_RSS_INTERVAL_MS); if so,
  // the resident bytes in `rss` (false also when /proc could not be read).
  bool sample_rss(std::uint64_t now, std::uint64_t& rss);
  // Whether the once-a-second look at the threads' names is due.
  bool names_due(std::uint64_t now);
  // glibc ends the process with exit(0) when its last thread exits; our
  // writers keep that from happening. True when the `writers` recorder
  // threads are the only threads left (checked at most every 50 ms).
  bool only_writer_left(std::uint64_t now, std::uint32_t writers);
  // Closes the descriptors kept open (the writer ends or parks).
  void close();
  // In a fork child: the parent's descriptors are not ours.
  void reset_after_fork() { *this = ProcSampler{}; }

 private:
  int statm_fd_ = -1;
  int stat_fd_ = -1;
  std::uint64_t last_rss_ns_ = 0;
  std::uint64_t last_names_ns_ = 0;
  std::uint64_t last_alone_check_ns_ = 0;
};

extern constinit ProcSampler g_proc;

// The name of thread `tid` of this process (/proc/self/task/TID/comm),
// without its newline: its length, 0 if it could not be read.
std::size_t read_thread_name(std::uint64_t tid, char (&name)[17]);
// Whether the kernel no longer knows thread `tid` of process `pid`.
bool thread_gone(std::uint64_t pid, std::uint64_t tid);
// /proc/self/cmdline into `buf`, arguments separated by NULs: its length.
std::size_t read_cmdline(std::byte* buf, std::size_t cap);

}  // namespace memrec::preload
