// Plain write() and pread() of whole events: the file is read back once, in
// order per thread, a chunk at a time, so there is nothing to map.
#include "load/event_spill.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "load/spill_buffer.h"

namespace memrec::analyzer {

EventSpill::~EventSpill() {
  if (fd_ >= 0) ::close(fd_);
}

bool EventSpill::append(std::span<const HeapEvent> events, std::uint64_t& offset) {
  if (failed_) return false;
  if (fd_ < 0) {
    fd_ = open_unlinked_file(dir_);
    if (fd_ < 0) {
      failed_ = true;
      return false;
    }
  }
  const auto* bytes = reinterpret_cast<const char*>(events.data());
  std::size_t left = events.size_bytes();
  off_t at = static_cast<off_t>(written_ * sizeof(HeapEvent));
  while (left > 0) {
    const ssize_t n = ::pwrite(fd_, bytes, left, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      failed_ = true;  // what was written before stays readable
      return false;
    }
    bytes += n;
    at += n;
    left -= static_cast<std::size_t>(n);
  }
  offset = written_;
  written_ += events.size();
  return true;
}

void EventSpill::read(std::uint64_t offset, std::size_t count, std::vector<HeapEvent>& out) const {
  const std::size_t first = out.size();
  out.resize(first + count);
  auto* bytes = reinterpret_cast<char*>(out.data() + first);
  std::size_t left = count * sizeof(HeapEvent);
  off_t at = static_cast<off_t>(offset * sizeof(HeapEvent));
  while (left > 0) {
    const ssize_t n = ::pread(fd_, bytes, left, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      throw std::runtime_error("cannot read back the events held in a file in " + dir_ + ": " +
                               (n < 0 ? std::strerror(errno) : "the file is shorter than written"));
    }
    bytes += n;
    at += n;
    left -= static_cast<std::size_t>(n);
  }
}

void EventSpill::discard(std::uint64_t offset, std::uint64_t count) {
  constexpr std::uint64_t kPage = 4096;
  const std::uint64_t from = (offset * sizeof(HeapEvent) + kPage - 1) / kPage * kPage;
  const std::uint64_t to = (offset + count) * sizeof(HeapEvent) / kPage * kPage;
  if (fd_ < 0 || to <= from) return;
  // FALLOC_FL_PUNCH_HOLE needs KEEP_SIZE (fallocate(2)); ext4, xfs, btrfs and tmpfs have it.
  (void)::fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(from),
                    static_cast<off_t>(to - from));
}

}  // namespace memrec::analyzer
