#include "load/spill_buffer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <utility>

namespace memrec::analyzer {
namespace {

// The first mapping of a buffer; it doubles from there.
constexpr std::size_t kMinBytes = 64 << 10;

std::string g_directory;  // set before any table is built
// The directory could not hold a file: not tried again. Atomic: view's
// downloads build tables on the server's threads.
std::atomic<bool> g_directory_failed = false;

std::mutex g_warnings_mutex;
std::vector<std::string> g_warnings;

void warn(std::string message) {
  const std::lock_guard lock(g_warnings_mutex);
  if (std::find(g_warnings.begin(), g_warnings.end(), message) == g_warnings.end()) {
    g_warnings.push_back(std::move(message));
  }
}

// An unlinked file in the directory, or -1 (warned).
int open_spill_file() {
  if (g_directory_failed) return -1;
  const int fd = open_unlinked_file(g_directory);
  if (fd < 0) {
    g_directory_failed = true;
    warn("cannot keep allocation tables in " + g_directory + " (" + std::strerror(errno) +
         "): they stay in memory; --spill-dir names another directory");
  }
  return fd;
}

std::size_t page_bytes() {
  static const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

void* map_anonymous(std::size_t bytes) {
  return mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}

}  // namespace

int open_unlinked_file(const std::string& dir) {
  int fd = open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without O_TMPFILE: a named file, unlinked at once.
    std::string name = dir + "/memrec-spill-XXXXXX";
    fd = mkostemp(name.data(), O_CLOEXEC);
    if (fd >= 0) unlink(name.c_str());
  }
  return fd;
}

SpillBuffer::SpillBuffer(SpillBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      capacity_(std::exchange(other.capacity_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

SpillBuffer& SpillBuffer::operator=(SpillBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

SpillBuffer::~SpillBuffer() { release(); }

void SpillBuffer::release() {
  if (data_ != nullptr) munmap(data_, capacity_);
  if (fd_ >= 0) close(fd_);
  data_ = nullptr;
  capacity_ = 0;
  fd_ = -1;
}

void SpillBuffer::grow(std::size_t bytes) {
  if (bytes <= capacity_) return;
  const std::size_t page = page_bytes();
  const std::size_t want = (std::max(bytes, kMinBytes) + page - 1) / page * page;
  if (data_ == nullptr && fd_ < 0 && !g_directory.empty()) fd_ = open_spill_file();
  if (fd_ >= 0) {
    // Blocks reserved now: a page of a sparse file that finds the disk full
    // when it is written back would be a SIGBUS.
    if (const int rc = posix_fallocate(fd_, static_cast<off_t>(capacity_), static_cast<off_t>(want - capacity_));
        rc != 0) {
      warn("no room left for allocation tables in " + g_directory + " (" + std::strerror(rc) +
           "): the rest stays in memory");
      move_to_memory(want);
      return;
    }
  }
  void* p = data_ != nullptr ? mremap(data_, capacity_, want, MREMAP_MAYMOVE)
            : fd_ >= 0       ? mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0)
                             : map_anonymous(want);
  if (p == MAP_FAILED) throw std::bad_alloc();
  data_ = static_cast<std::byte*>(p);
  capacity_ = want;
}

void SpillBuffer::prepare(std::size_t offset) {
  if (fd_ < 0 || offset >= capacity_) return;
  madvise(data_ + offset, std::min(kPrepareBytes, capacity_ - offset), MADV_POPULATE_WRITE);
}

void SpillBuffer::move_to_memory(std::size_t bytes) {
  void* p = map_anonymous(bytes);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (data_ != nullptr) std::memcpy(p, data_, capacity_);
  release();
  data_ = static_cast<std::byte*>(p);
  capacity_ = bytes;
}

void set_spill_directory(std::string dir) {
  g_directory = std::move(dir);
  g_directory_failed = false;
}

std::string default_spill_directory() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/var/tmp";
}

std::vector<std::string> spill_warnings() {
  const std::lock_guard lock(g_warnings_mutex);
  return g_warnings;
}

}  // namespace memrec::analyzer
