#include "load/sink_thread.h"

#include <algorithm>

namespace memrec::analyzer {

SinkThread::SinkThread(TaggedEventSink& target)
    : target_(target), queue_([this](Batch& batch) { consume(batch); }, kMaxBatches, /*lower_priority=*/false) {
  batch_.events.reserve(kBatchEvents);
  batch_.tags.reserve(kBatchEvents);
}

SinkThread::~SinkThread() {
  if (!finished_) queue_.finish(/*drop_pending=*/true);
}

void SinkThread::on_tagged_events(std::span<const HeapEvent> events, std::span<const std::uint32_t> tags,
                                  std::uint32_t thread) {
  while (!events.empty()) {
    const std::size_t n = std::min(events.size(), kBatchEvents - batch_.events.size());
    batch_.events.insert(batch_.events.end(), events.begin(), events.begin() + static_cast<std::ptrdiff_t>(n));
    batch_.tags.insert(batch_.tags.end(), tags.begin(), tags.begin() + static_cast<std::ptrdiff_t>(n));
    if (!batch_.runs.empty() && batch_.runs.back().thread == thread) {
      batch_.runs.back().count += static_cast<std::uint32_t>(n);
    } else {
      batch_.runs.push_back({thread, static_cast<std::uint32_t>(n)});
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
  std::swap(next, batch_);
  queue_.push(std::move(next));
}

void SinkThread::consume(Batch& batch) {
  if (failed_) return;
  try {
    std::span<const HeapEvent> events(batch.events);
    std::span<const std::uint32_t> tags(batch.tags);
    for (const Run& run : batch.runs) {
      target_.on_tagged_events(events.first(run.count), tags.first(run.count), run.thread);
      events = events.subspan(run.count);
      tags = tags.subspan(run.count);
    }
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
