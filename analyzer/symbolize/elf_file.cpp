// Reads ELF headers with libelf; the file stays open (read-only, mmap-free
// ELF_C_READ) only as long as the ElfFile lives.
#include "symbolize/elf_file.h"

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace memrec::analyzer {
namespace {

// libelf refuses to work until told the ELF version we speak; once per
// process is enough, and a function-local static makes the call thread-safe.
void init_libelf() {
  static const bool done = [] {
    elf_version(EV_CURRENT);
    return true;
  }();
  (void)done;
}

}  // namespace

Result<ElfFile> ElfFile::open(const std::string& path) {
  init_libelf();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Error{err == ENOENT || err == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kIo,
                 fmt::format("{}: cannot open ({})", path, std::strerror(err))};
  }
  Elf* elf = elf_begin(fd, ELF_C_READ, nullptr);
  if (elf == nullptr || elf_kind(elf) != ELF_K_ELF) {
    if (elf != nullptr) elf_end(elf);
    ::close(fd);
    return Error{ErrorCode::kCorrupt, fmt::format("{}: not an ELF file", path)};
  }
  return ElfFile(path, fd, elf);
}

ElfFile::ElfFile(ElfFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), elf_(std::exchange(other.elf_, nullptr)) {}

ElfFile& ElfFile::operator=(ElfFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    elf_ = std::exchange(other.elf_, nullptr);
  }
  return *this;
}

ElfFile::~ElfFile() { close(); }

void ElfFile::close() {
  if (elf_ != nullptr) elf_end(elf_);
  if (fd_ >= 0) ::close(fd_);
  elf_ = nullptr;
  fd_ = -1;
}

std::vector<std::uint8_t> ElfFile::build_id() const {
  const void* bits = nullptr;
  const ssize_t n = dwelf_elf_gnu_build_id(elf_, &bits);
  if (n <= 0) return {};
  const auto* p = static_cast<const std::uint8_t*>(bits);
  return {p, p + n};
}

std::optional<std::string> ElfFile::debuglink() const {
  GElf_Word crc = 0;
  const char* link = dwelf_elf_gnu_debuglink(elf_, &crc);
  if (link == nullptr || link[0] == '\0') return std::nullopt;
  return std::string(link);
}

bool ElfFile::has_dwarf() const {
  std::size_t shstrndx = 0;
  if (elf_getshdrstrndx(elf_, &shstrndx) != 0) return false;
  for (Elf_Scn* scn = elf_nextscn(elf_, nullptr); scn != nullptr; scn = elf_nextscn(elf_, scn)) {
    GElf_Shdr shdr;
    if (gelf_getshdr(scn, &shdr) == nullptr) continue;
    const char* name = elf_strptr(elf_, shstrndx, shdr.sh_name);
    if (name == nullptr) continue;
    const std::string_view n(name);
    // .zdebug_info: the old GNU compressed form, which libdw still reads.
    if ((n == ".debug_info" || n == ".zdebug_info") && shdr.sh_type != SHT_NOBITS && shdr.sh_size > 0) return true;
  }
  return false;
}

std::vector<format::Segment> ElfFile::load_segments() const {
  std::vector<format::Segment> out;
  std::size_t count = 0;
  if (elf_getphdrnum(elf_, &count) != 0) return out;
  for (std::size_t i = 0; i < count; ++i) {
    GElf_Phdr ph;
    if (gelf_getphdr(elf_, static_cast<int>(i), &ph) == nullptr || ph.p_type != PT_LOAD) continue;
    // The same encoding the preload records (preload/module_registry.cpp).
    out.push_back(format::Segment{ph.p_vaddr, ph.p_memsz, ph.p_offset,
                                  static_cast<std::uint8_t>(((ph.p_flags & PF_X) ? format::kSegmentExec : 0) |
                                                            ((ph.p_flags & PF_W) ? format::kSegmentWrite : 0) |
                                                            ((ph.p_flags & PF_R) ? format::kSegmentRead : 0))});
  }
  return out;
}

std::string to_hex(const std::vector<std::uint8_t>& bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const std::uint8_t b : bytes) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

}  // namespace memrec::analyzer
