// Growable memory for the allocation table's columns (model/spill_column.h) that
// need not stay in RAM. `memrec view` keeps about 40 bytes per allocation
// (model/allocation_table.h): a 2 GB dump of bench/churn holds 500 million
// allocations, 20 GB of table, and a view of it in anonymous memory grew past
// 18 GiB on a 24 GiB machine before it was stopped. With a spill directory,
// each buffer is an unlinked file there (O_TMPFILE, mode 0600), mapped
// shared: the kernel writes its pages out and drops them under memory
// pressure, so the table costs disk and page cache, not memory of its own.
// Without one (unset, or a directory that failed), it is anonymous memory;
// view and export set one unless told not to.
//
// Either way the buffer grows with mremap, which moves page tables instead
// of copying: no moment with both the old and the new array, as a
// std::vector's growth has.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace memrec::analyzer {

class SpillBuffer {
 public:
  SpillBuffer() = default;
  SpillBuffer(const SpillBuffer&) = delete;
  SpillBuffer& operator=(const SpillBuffer&) = delete;
  SpillBuffer(SpillBuffer&& other) noexcept;
  SpillBuffer& operator=(SpillBuffer&& other) noexcept;
  ~SpillBuffer();

  std::byte* data() const { return data_; }
  std::size_t capacity_bytes() const { return capacity_; }
  // Whether the pages are backed by a file (false: anonymous memory).
  bool spilled() const { return fd_ >= 0; }

  // Grows to at least `bytes`, keeping the contents. A file that cannot grow
  // (the directory's disk is full) is copied into anonymous memory once, with
  // a warning. Throws std::bad_alloc when no memory is left at all, as
  // std::vector does.
  void grow(std::size_t bytes);

  // Readies the kPrepareBytes from `offset` (clipped to the capacity) for
  // writing: in a file, their pages are faulted in at once, dirty. Faulted
  // one by one, the kernel read ahead and zeroed pages of the file beyond
  // them, which memory pressure then dropped, clean, before they were
  // written, and zeroed again: a quarter of the view's CPU on a 2 GB dump,
  // whose load took 130 s against 119 s with this (kernels before 5.14
  // refuse the advice, and the pages fault in as before).
  static constexpr std::size_t kPrepareBytes = 1 << 20;
  void prepare(std::size_t offset);

 private:
  void release();
  void move_to_memory(std::size_t bytes);

  std::byte* data_ = nullptr;
  std::size_t capacity_ = 0;
  int fd_ = -1;
};

// An unlinked read/write file in `dir` (O_TMPFILE; else a named file,
// unlinked at once), or -1 with errno set.
int open_unlinked_file(const std::string& dir);

// Where buffers created from now on put their files; "" (the default) keeps
// them in memory. Not thread-safe: set it before loading.
void set_spill_directory(std::string dir);
// The directory `memrec view` and `memrec export` use unless told otherwise:
// $TMPDIR if set, else /var/tmp, which is on disk where /tmp may be tmpfs.
std::string default_spill_directory();
// --spill-dir's help (memrec view and export). The default is not printed:
// it depends on the environment, and docs/reference.md holds this text.
inline constexpr const char* kSpillDirHelp =
    "keep allocation tables (about 15 bytes an allocation) in unlinked files in this directory, which the "
    "kernel writes to disk when memory runs short (default: $TMPDIR, else /var/tmp; \"\": in memory)";
// What went wrong with the directory (it cannot hold files, its disk filled),
// each reason once, in order. Thread-safe.
std::vector<std::string> spill_warnings();

}  // namespace memrec::analyzer
