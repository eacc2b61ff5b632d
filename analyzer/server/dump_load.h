// How far `memrec view` has loaded each dump it was given: the server listens
// before any dump is loaded (view_loads.h), so the dump list names each one
// as loading (with its progress), ready or failed (with why), and requests
// about a dump not ready get a 503 or its error (view_params.cpp find_dump).
// The loader writes, the handlers read; no field here needs a lock.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <utility>

namespace memrec::analyzer::server {

enum class LoadState : std::uint8_t { kLoading, kReady, kFailed };

class DumpLoad {
 public:
  explicit DumpLoad(std::string path) : path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  LoadState state() const { return state_.load(std::memory_order_acquire); }
  // The bytes of the file read by the report's pass, of all.
  void progress(std::uint64_t bytes_read, std::uint64_t bytes_total);
  std::uint64_t bytes_read() const { return bytes_read_.load(std::memory_order_relaxed); }
  std::uint64_t bytes_total() const { return bytes_total_.load(std::memory_order_relaxed); }
  // bytes_read / bytes_total, below 1 until ready (0 before the first bytes).
  double fraction() const;
  // Set while no handler reads the dump (ViewData::follow_lock held): the
  // dump's ViewDump is in place before the state says so.
  void ready() { state_.store(LoadState::kReady, std::memory_order_release); }
  // `why`: a sentence naming the file, for the page and the API.
  void fail(std::string why);
  // Only once state() is kFailed: the release in fail() pairs with state()'s acquire.
  const std::string& error() const { return error_; }

 private:
  std::string path_;
  std::string error_;
  std::atomic<LoadState> state_{LoadState::kLoading};
  std::atomic<std::uint64_t> bytes_read_{0};
  std::atomic<std::uint64_t> bytes_total_{0};
};

}  // namespace memrec::analyzer::server
