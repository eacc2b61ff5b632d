// Hands a load's ordered events to another sink on a thread of its own, in
// batches. `memrec view` builds its allocation table this way beside the
// report's replay: on the replay's thread the table doubled the serial part
// of the load (churn's 10 M allocations: 1.5 s against the report's 0.75).
// The target sees the same events in the same order; it must not be read
// before finish() returns.
#pragma once

#include <cstdint>
#include <exception>
#include <span>
#include <vector>

#include "load/helper_queue.h"
#include "load/ordered_events.h"

namespace memrec::analyzer {

class SinkThread final : public OrderedEventSink {
 public:
  explicit SinkThread(OrderedEventSink& target);
  ~SinkThread() override;

  void on_event(const HeapEvent& event, std::uint32_t thread) override;
  void on_events(std::span<const HeapEvent> events, std::uint32_t thread) override;

  // Waits until the target has had every event; rethrows what it threw
  // (std::bad_alloc, say), which stopped it taking more.
  void finish();

 private:
  // A batch's events, as runs of one thread each.
  struct Run {
    std::uint32_t thread;
    std::uint32_t count;
  };
  struct Batch {
    std::vector<HeapEvent> events;
    std::vector<Run> runs;
  };
  // 32 bytes an event: 1 MiB a batch, at most kMaxBatches waiting.
  static constexpr std::size_t kBatchEvents = 32768;
  static constexpr std::size_t kMaxBatches = 4;

  void append(std::span<const HeapEvent> events, std::uint32_t thread);
  void hand_over();
  void consume(Batch& batch);

  OrderedEventSink& target_;
  Batch batch_;                // being filled, on the caller's thread
  std::exception_ptr failed_;  // written by the queue's thread, read after it ended
  bool finished_ = false;
  HelperQueue<Batch> queue_;  // last: its thread uses the rest
};

}  // namespace memrec::analyzer
