#include "load/sink_thread.h"

#include <algorithm>

namespace memrec::analyzer {

SinkThread::SinkThread(TaggedEventSink& target)
    : target_(target), queue_([this](Batch& batch) { consume(batch); }, kMaxBatches, /*lower_priority=*/false) {
  batch_.events.reserve(kBatchEvents);
  batch_.tags.reserve(kBatchEvents);
  batch_.threads.reserve(kBatchEvents);
}

SinkThread::~SinkThread() {
  if (!finished_) queue_.finish(/*drop_pending=*/true);
}

void SinkThread::on_tagged_events(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                                  std::uint32_t thread) {
  append(events, tags, {}, thread);
}

void SinkThread::on_tagged_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                                  std::span<const std::uint32_t> threads) {
  append(events, tags, threads, 0);
}

void SinkThread::append(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                        std::span<const std::uint32_t> threads, std::uint32_t fill_thread) {
  while (!events.empty()) {
    const std::size_t n = std::min(events.size(), kBatchEvents - batch_.events.size());
    const auto count = static_cast<std::ptrdiff_t>(n);
    batch_.events.insert(batch_.events.end(), events.begin(), events.begin() + count);
    batch_.tags.insert(batch_.tags.end(), tags.begin(), tags.begin() + count);
    if (threads.empty()) {
      batch_.threads.resize(batch_.threads.size() + n, fill_thread);
    } else {
      batch_.threads.insert(batch_.threads.end(), threads.begin(), threads.begin() + count);
      threads = threads.subspan(n);
    }
    events = events.subspan(n);
    tags = tags.subspan(n);
    if (batch_.events.size() == kBatchEvents) hand_over();
  }
}

void SinkThread::hand_over() {
  Batch next;
  next.events.reserve(kBatchEvents);
  next.tags.reserve(kBatchEvents);
  next.threads.reserve(kBatchEvents);
  std::swap(next, batch_);
  queue_.push(std::move(next));
}

void SinkThread::consume(Batch& batch) {
  if (failed_) return;
  try {
    target_.on_tagged_merged(batch.events, batch.tags, batch.threads);
  } catch (...) {
    failed_ = std::current_exception();
  }
}

void SinkThread::finish() {
  if (finished_) return;
  finished_ = true;
  if (!batch_.events.empty()) hand_over();
  queue_.finish();
  if (failed_) std::rethrow_exception(failed_);
}

}  // namespace memrec::analyzer
