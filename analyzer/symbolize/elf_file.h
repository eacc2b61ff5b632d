// The few facts the debug-file lookup needs from an ELF file on disk: its GNU
// build-id, its .gnu_debuglink, whether it carries DWARF, its PT_LOAD
// segments. Address lookups never go through here: libdwfl opens the files it
// resolves against itself (module_resolver.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "memrec/format/record_encoder.h"
#include "memrec/reader/result.h"

typedef struct Elf Elf;

namespace memrec::analyzer {

class ElfFile {
 public:
  // kNotFound if there is no such file, kIo if it cannot be read, kCorrupt if
  // it is not an ELF file.
  static Result<ElfFile> open(const std::string& path);

  ElfFile(ElfFile&& other) noexcept;
  ElfFile& operator=(ElfFile&& other) noexcept;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile();

  const std::string& path() const { return path_; }
  std::vector<std::uint8_t> build_id() const;  // empty if none
  std::optional<std::string> debuglink() const;
  // A .debug_info section with contents: a stripped file or a debug file made
  // by `objcopy --only-keep-debug` of a file without -g has none.
  bool has_dwarf() const;
  std::vector<format::Segment> load_segments() const;

 private:
  ElfFile(std::string path, int fd, Elf* elf) : path_(std::move(path)), fd_(fd), elf_(elf) {}
  void close();

  std::string path_;
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

// Lower-case hex, as in /usr/lib/debug/.build-id/ paths and messages.
std::string to_hex(const std::vector<std::uint8_t>& bytes);

}  // namespace memrec::analyzer
