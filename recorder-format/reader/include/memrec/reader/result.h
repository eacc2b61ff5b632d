// Errors as values for the reader and the analyzer: a `Result<T>` holds a T or
// an `Error` whose message is a whole sentence naming the file and offset.
// Nothing here throws; asking a failed Result for its value is a bug and aborts.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

namespace memrec {

enum class ErrorCode {
  kNotFound,         // no such file
  kIo,               // the OS refused: permission, a directory, a read error
  kEmpty,            // a zero-byte file
  kBadMagic,         // not a memrec dump
  kVersion,          // written by a newer memrec
  kTruncatedHeader,  // ends inside the file header: nothing to read
  kCorrupt,          // present bytes that do not decode
  kTruncated,        // a frame whose tail was never written (zeros): the dump ends before it
  kUsage,            // the command line asked for something impossible
  kInternal,         // a bug in memrec
};

struct Error {
  ErrorCode code = ErrorCode::kInternal;
  std::string message;
};

namespace detail {
[[noreturn]] inline void bad_result_access(const char* what) {
  std::fprintf(stderr, "memrec: internal error: %s\n", what);
  std::abort();
}
}  // namespace detail

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}      // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    if (!ok()) detail::bad_result_access(std::get<1>(v_).message.c_str());
    return std::get<0>(v_);
  }
  const T& value() const& {
    if (!ok()) detail::bad_result_access(std::get<1>(v_).message.c_str());
    return std::get<0>(v_);
  }
  T&& value() && {
    if (!ok()) detail::bad_result_access(std::get<1>(v_).message.c_str());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  const Error& error() const {
    if (ok()) detail::bad_result_access("error() called on a Result that holds a value");
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// The outcome of work that has no value to return.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT: implicit by design

  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    if (ok_) detail::bad_result_access("error() called on a successful Status");
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

}  // namespace memrec
