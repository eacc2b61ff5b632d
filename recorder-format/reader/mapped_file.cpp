// Opens a dump for reading. Regular files are mmap()ed so that frames can be
// decoded in parallel straight from the page cache without copying.
#include "memrec/reader/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace memrec::reader {
namespace {

// Closes a descriptor on every return path.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

Error os_error(const std::string& path, const char* action, int err) {
  const ErrorCode code = err == ENOENT ? ErrorCode::kNotFound : ErrorCode::kIo;
  if (err == ENOENT) return Error{code, fmt::format("{}: no such file; check the path", path)};
  return Error{code, fmt::format("{}: cannot {}: {}", path, action, std::strerror(err))};
}

// Reads a stream to its end; for inputs that cannot be mapped (pipes).
Result<std::vector<std::byte>> read_all_bytes(int fd, const std::string& path) {
  std::vector<std::byte> out;
  std::byte chunk[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return os_error(path, "read it", errno);
    }
    if (n == 0) return out;
    out.insert(out.end(), chunk, chunk + n);
  }
}

}  // namespace

Result<MappedFile> MappedFile::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return os_error(path, "open it", errno);
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return os_error(path, "stat it", errno);
  if (S_ISDIR(st.st_mode)) {
    return Error{ErrorCode::kIo, fmt::format("{}: is a directory, not a memrec dump; pass a .dat file", path)};
  }

  MappedFile file;
  file.path_ = path;
  if (S_ISREG(st.st_mode)) {
    const auto size = static_cast<std::size_t>(st.st_size);
    if (size == 0) {
      return Error{ErrorCode::kEmpty,
                   fmt::format("{}: empty file, not a memrec dump (the recording wrote nothing)", path)};
    }
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) return os_error(path, "map it", errno);
    file.map_ = map;
    file.map_bytes_ = size;
    file.bytes_ = std::span(static_cast<const std::byte*>(map), size);
    return file;
  }

  auto bytes = read_all_bytes(fd, path);
  if (!bytes) return bytes.error();
  if (bytes->empty()) {
    return Error{ErrorCode::kEmpty, fmt::format("{}: empty input, not a memrec dump", path)};
  }
  file.owned_ = std::move(*bytes);
  file.bytes_ = file.owned_;
  return file;
}

MappedFile MappedFile::from_bytes(std::vector<std::byte> bytes, std::string name) {
  MappedFile file;
  file.path_ = std::move(name);
  file.owned_ = std::move(bytes);
  file.bytes_ = file.owned_;
  return file;
}

MappedFile::MappedFile(MappedFile&& other) noexcept { *this = std::move(other); }

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this == &other) return *this;
  release();
  path_ = std::move(other.path_);
  map_ = std::exchange(other.map_, nullptr);
  map_bytes_ = std::exchange(other.map_bytes_, 0);
  // A moved vector keeps its buffer, so a span into it stays valid.
  owned_ = std::move(other.owned_);
  bytes_ = std::exchange(other.bytes_, {});
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::drop_pages(std::uint64_t begin, std::uint64_t end) const {
  if (map_ == nullptr) return;  // read into memory: DONTNEED would zero it
  end = std::min<std::uint64_t>(end, map_bytes_);
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uintptr_t>(map_);  // page-aligned: mmap's
  const std::uintptr_t first = (base + begin + page - 1) & ~(page - 1);
  const std::uintptr_t last = (base + end) & ~(page - 1);
  if (first < last) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

void MappedFile::release() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
  map_ = nullptr;
  map_bytes_ = 0;
  bytes_ = {};
  owned_.clear();
}

}  // namespace memrec::reader
