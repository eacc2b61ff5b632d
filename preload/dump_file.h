// The process's dump file: created from the MEMREC_OUTPUT template, its
// header written once, frames appended. Only the writers (or the thread that
// finishes a process without one) call it; append() from any of them at once,
// the rest from the main writer. It never allocates.
//
// Templates: %p pid, %e the name it was run as (argv[0]'s last element), %t
// the start time (seconds since the epoch), %n a counter, %% a percent sign.
// Files are created 0600 and never overwritten: an existing name moves %n
// on, or gets ".N" before its extension.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace memrec::preload {

// Opens a new file for writing. Returns the fd (O_CLOEXEC) and fills `path`,
// or returns -1 with errno set and `path` naming the last name tried.
int create_output(const char* tmpl, std::uint64_t pid, std::uint64_t start_s, char* path, std::size_t cap);

// Who and when the dump is for: the header's fields, set at launch.
struct DumpOrigin {
  std::uint64_t pid = 0;
  std::uint64_t ppid = 0;
  std::uint64_t start_mono_ns = 0;
  std::uint64_t start_wall_ns = 0;
};

class DumpFile {
 public:
  // Maps the buffer the header's command line is read into; false if mmap failed.
  bool setup();
  // Creates the file and writes its header (encoded in `scratch`), once;
  // later calls say whether it is open and writable.
  bool open(std::span<std::byte> scratch);
  // The file open() created, opened again by path for appending (with
  // `high`, in the program's table); -1 if the path no longer names it
  // (the directory was renamed, a mount namespace changed).
  int reopen(bool high) const;
  // Appends one frame at a place reserved for it alone (any writer thread,
  // concurrently); false (and the recording stops) if that failed or the
  // dump was deleted.
  bool append(const std::byte* data, std::size_t size);
  // Reports the first failure with the path and stops writing.
  void fail(std::string_view what, int err);
  void close();

  // The descriptor the writer writes to (-1: none held now).
  int fd() const { return fd_; }
  void set_fd(int fd) { fd_ = fd; }
  bool opened() const { return opened_; }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  const char* path() const { return path_; }
  DumpOrigin& origin() { return origin_; }

  // In a fork child: the parent's file is not ours; the buffer is.
  void reset_after_fork();

 private:
  bool write_all(int fd, const std::byte* data, std::size_t size, std::string_view what);
  bool write_header(int fd, const std::byte* data, std::size_t size);
  bool make_path_absolute();

  int fd_ = -1;            // in the writer's own table (fd_guard.h), or guarded in the program's
  std::uint64_t dev_ = 0;  // the dump's identity, to check the file reopened after a park
  std::uint64_t ino_ = 0;
  bool opened_ = false;
  std::atomic<bool> failed_{false};    // set by any writer thread; a relaxed flag that stops them all
  std::atomic<std::uint64_t> end_{0};  // the file's length with every frame reserved so far
  char path_[4096] = {};
  DumpOrigin origin_;
  std::byte* cmdline_ = nullptr;
};

extern constinit DumpFile g_dump;

}  // namespace memrec::preload
