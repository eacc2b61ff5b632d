// A whole file's bytes, read-only: mmap()ed when it is a regular file, read
// into memory otherwise (a pipe, /dev/stdin). The reader decodes straight out
// of these bytes; nothing here interprets them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "memrec/reader/result.h"

namespace memrec::reader {

class MappedFile {
 public:
  // Errors name the file: missing (kNotFound), a directory or unreadable (kIo),
  // empty (kEmpty).
  static Result<MappedFile> open(const std::string& path);
  // Wraps bytes already in memory (tests, fuzzers); `name` is used in messages.
  static MappedFile from_bytes(std::vector<std::byte> bytes, std::string name);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return bytes_; }
  // From now on only the first `size` bytes (all if fewer): a second pass
  // over a file still being written reads what the first one read.
  void keep_first(std::size_t size) { bytes_ = bytes_.first(std::min(size, bytes_.size())); }
  const std::string& path() const { return path_; }
  // Gives back the mapping's pages wholly inside [begin, end): the page
  // cache keeps them, a later read is a minor fault, and they no longer
  // count in this process's RSS. Nothing for bytes read into memory.
  void drop_pages(std::uint64_t begin, std::uint64_t end) const;

 private:
  MappedFile() = default;
  void release();

  std::string path_;
  std::span<const std::byte> bytes_;  // into map_ or owned_
  void* map_ = nullptr;               // non-null when bytes_ is an mmap()ed region
  std::size_t map_bytes_ = 0;
  std::vector<std::byte> owned_;
};

}  // namespace memrec::reader
