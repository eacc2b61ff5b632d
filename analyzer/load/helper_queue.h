// A thread of its own that takes work from a queue in order, by default at the
// helpers' lower priority (helper_priority.h): what the stack table's builder
// and the symbol prefetch run on, beside a load's serial replay.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>

#include "load/helper_priority.h"

namespace memrec::analyzer {

template <typename T>
class HelperQueue {
 public:
  // `handle` runs on the thread for each item, in the order pushed. With
  // `max_pending` (0: no bound), push() waits while that many items wait.
  // With `lower_priority` false, the thread keeps the load's priority: for
  // work as serial as the replay's (sink_thread.h).
  explicit HelperQueue(std::function<void(T&)> handle, std::size_t max_pending = 0, bool lower_priority = true)
      : handle_(std::move(handle)),
        max_pending_(max_pending),
        lower_priority_(lower_priority),
        thread_([this] { run(); }) {}
  ~HelperQueue() { finish(); }
  HelperQueue(const HelperQueue&) = delete;
  HelperQueue& operator=(const HelperQueue&) = delete;

  void push(T item) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return max_pending_ == 0 || queue_.size() < max_pending_; });
    queue_.push_back(std::move(item));
    changed_.notify_all();
  }

  // Waits until the thread has handled every item pushed and ended; with
  // `drop_pending`, the items it has not taken yet are dropped first.
  void finish(bool drop_pending = false) {
    {
      const std::lock_guard lock(mutex_);
      done_ = true;
      if (drop_pending) queue_.clear();
    }
    changed_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    if (lower_priority_) lower_helper_priority();
    for (;;) {
      T item;
      {
        std::unique_lock lock(mutex_);
        changed_.wait(lock, [&] { return done_ || !queue_.empty(); });
        if (queue_.empty()) return;
        item = std::move(queue_.front());
        queue_.pop_front();
      }
      changed_.notify_all();  // room for a push() that waits
      handle_(item);
    }
  }

  std::function<void(T&)> handle_;
  std::size_t max_pending_;
  bool lower_priority_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<T> queue_;  // guarded by mutex_
  bool done_ = false;    // guarded by mutex_
  std::thread thread_;   // last: starts once the rest is constructed
};

}  // namespace memrec::analyzer
