// A growable array of plain values over a SpillBuffer: the part of
// std::vector the allocation table's per-row columns use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "load/spill_buffer.h"

namespace memrec::analyzer {

template <typename T>
class SpillColumn {
  static_assert(std::is_trivially_copyable_v<T>);
  // push_back() prepares a MiB when its end reaches one.
  static_assert(SpillBuffer::kPrepareBytes % sizeof(T) == 0);

 public:
  SpillColumn() = default;
  SpillColumn(SpillColumn&& other) noexcept : buf_(std::move(other.buf_)), size_(std::exchange(other.size_, 0)) {}
  SpillColumn& operator=(SpillColumn&& other) noexcept {
    buf_ = std::move(other.buf_);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t capacity() const { return buf_.capacity_bytes() / sizeof(T); }
  bool spilled() const { return buf_.spilled(); }

  T* data() { return reinterpret_cast<T*>(buf_.data()); }
  const T* data() const { return reinterpret_cast<const T*>(buf_.data()); }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void push_back(const T& value) {
    if (size_ == capacity()) [[unlikely]]
      buf_.grow(next_capacity_bytes(buf_.capacity_bytes(), (size_ + 1) * sizeof(T)));
    if ((size_ * sizeof(T)) % SpillBuffer::kPrepareBytes == 0) [[unlikely]]
      buf_.prepare(size_ * sizeof(T));
    data()[size_++] = value;
  }

  // Appends n values at once: a column of coded bytes grows by a block at a time.
  void append(const T* values, std::size_t n) {
    if (size_ + n > capacity()) buf_.grow(next_capacity_bytes(buf_.capacity_bytes(), (size_ + n) * sizeof(T)));
    const std::size_t first = size_ * sizeof(T);
    const std::size_t last = (size_ + n) * sizeof(T);
    // Each MiB that the values start is readied before it is written.
    for (std::size_t b =
             (first + SpillBuffer::kPrepareBytes - 1) / SpillBuffer::kPrepareBytes * SpillBuffer::kPrepareBytes;
         b < last; b += SpillBuffer::kPrepareBytes) {
      buf_.prepare(b);
    }
    std::copy(values, values + n, data() + size_);
    size_ += n;
  }

  // The capacity after `have` bytes that must hold `need`: doubling, then
  // steps of 256 MiB. mremap copies nothing, so steps cost no time, and a
  // spill file overshoots by at most one (doubling reserved up to twice a
  // 4 GB column's disk space).
  static constexpr std::size_t next_capacity_bytes(std::size_t have, std::size_t need) {
    constexpr std::size_t kMaxStepBytes = std::size_t{256} << 20;
    return std::max(need, have + std::min(have, kMaxStepBytes));
  }
  // `n` elements whose values are unspecified until the caller writes them
  // (all of them, next): no pass that zeroes them first.
  void resize_for_overwrite(std::size_t n) {
    buf_.grow(n * sizeof(T));
    size_ = n;
  }
  // Readies the pages of elements [from, to) for writing at once, a MiB at a
  // time (SpillBuffer::prepare): for columns filled out of order.
  void prepare(std::size_t from, std::size_t to) {
    for (std::size_t b = from * sizeof(T) / SpillBuffer::kPrepareBytes * SpillBuffer::kPrepareBytes; b < to * sizeof(T);
         b += SpillBuffer::kPrepareBytes) {
      buf_.prepare(b);
    }
  }

 private:
  SpillBuffer buf_;
  std::size_t size_ = 0;
};

}  // namespace memrec::analyzer
