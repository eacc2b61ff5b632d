// A followed report owns its replay and the follower feeding it; starting
// over is making both anew, which a late event requires (dump_follower.h).
// With a table, the events the replay took wait, with the rows it released,
// until publish_table() hands them to the table's builder: the table changes
// only then, while its readers are kept out.
#include "reports/followed_report.h"

#include <algorithm>
#include <utility>

namespace memrec::analyzer {

class FollowedReport::TableTee final : public OrderedEventSink {
 public:
  explicit TableTee(StackReplay& replay) : replay_(replay) {}
  void on_event(const HeapEvent& event, std::uint32_t thread) override { on_events({&event, 1}, thread); }
  void on_events(std::span<const HeapEvent> events, std::uint32_t thread) override {
    const std::size_t at = grow(events);
    replay_.on_events(events, thread, std::span(tags_).subspan(at));
    threads_.resize(tags_.size(), thread);
  }
  void on_merged(std::span<const HeapEvent> events, std::span<const std::uint32_t> threads) override {
    const std::size_t at = grow(events);
    replay_.on_merged(events, threads, std::span(tags_).subspan(at));
    threads_.insert(threads_.end(), threads.begin(), threads.end());
  }
  // Hands the waiting events on and forgets them.
  void drain(AllocationTableBuilder& builder) {
    builder.on_tagged_merged(events_, tags_, threads_);
    // The room is kept for the next poll, which is about as large: grown
    // afresh, its pages were faulted in again at every poll. Room far beyond
    // this poll's (the history a first step or a replay started over read,
    // drained at the poll before) is not kept.
    constexpr std::size_t kMinRoom = std::size_t{1} << 20;
    if (events_.capacity() > 4 * std::max(events_.size(), kMinRoom)) {
      events_ = {};
      tags_ = {};
      threads_ = {};
    }
    events_.clear();
    tags_.clear();
    threads_.clear();
  }

 private:
  std::size_t grow(std::span<const HeapEvent> events) {
    const std::size_t at = events_.size();
    events_.insert(events_.end(), events.begin(), events.end());
    tags_.resize(events_.size(), kNoRow);
    return at;
  }
  StackReplay& replay_;
  std::vector<HeapEvent> events_;
  std::vector<std::uint32_t> tags_;
  std::vector<std::uint32_t> threads_;
};

FollowedReport::FollowedReport(std::string path, FollowOptions options, bool with_table)
    : path_(std::move(path)), options_(std::move(options)), with_table_(with_table) {}

FollowedReport::~FollowedReport() = default;
FollowedReport::FollowedReport(FollowedReport&&) noexcept = default;

Result<FollowStep> FollowedReport::start_and_step() {
  // The header must be there before the replay's window can start at it.
  const auto start = dump_start_ns(path_);
  if (!start) return start.error();
  follower_.reset();
  timeline_ = std::make_unique<HeapTimeline>(*start);
  replay_ = std::make_unique<StackReplay>(TimeWindow{*start});
  replay_->set_timeline(timeline_.get());
  mappings_ = std::make_unique<MappingRecord>(*start);
  replay_->set_mappings(mappings_.get());
  if (with_table_) {
    tee_ = std::make_unique<TableTee>(*replay_);
    table_ = std::make_shared<AllocationTableBuilder>(AllocationTableBuilder::Growing{});
  }
  follower_ = std::make_unique<DumpFollower>(path_, options_, tee_ ? static_cast<OrderedEventSink&>(*tee_) : *replay_);
  auto step = follower_->step();
  // No reader has this table yet: the history read by this first step goes
  // in now, not under the caller's lock (a dump followed an hour into its
  // run, or replayed again, would hold every handler for its whole table).
  if (tee_ != nullptr) {
    tee_->drain(*table_);
    table_->publish();
  }
  return step;
}

Result<FollowStep> FollowedReport::step() {
  if (follower_ == nullptr) return start_and_step();
  auto step = follower_->step();
  if (!step || !step->out_of_order) return step;
  ++restarts_;
  return start_and_step();
}

void FollowedReport::finish() {
  if (follower_ != nullptr) follower_->finish();
}

std::shared_ptr<AllocationTable> FollowedReport::publish_table() {
  if (table_ == nullptr || table_->full()) return nullptr;
  tee_->drain(*table_);
  if (table_->full()) return nullptr;
  return std::shared_ptr<AllocationTable>(table_, &table_->publish());
}

bool FollowedReport::table_full() const { return table_ != nullptr && table_->full(); }

HeapReport FollowedReport::report(Symbolizer& symbolizer) {
  StackReplay replay = *replay_;
  replay.finish();
  MappingRecord mappings = *mappings_;  // read only, but taken by pointer
  StreamedDump stats = follower_->stats();
  const CallSites& sites = sites_.update(stats.dump, replay.columns(), symbolizer);
  HeapReport r = assemble_heap_report(std::move(stats), RelativeWindow{}, replay, symbolizer, &mappings, &sites);
  r.dump.stacks.clear();
  return r;
}

HeapTimeline FollowedReport::timeline() const {
  HeapTimeline timeline = *timeline_;
  const LoadedDump& dump = follower_->dump();
  timeline.add_rss(dump.rss);
  if (dump.last_time_ns) timeline.extend_to(*dump.last_time_ns);
  return timeline;
}

MappingRecord FollowedReport::mappings() const {
  MappingRecord mappings = *mappings_;
  if (const auto last = follower_->dump().last_time_ns) mappings.extend_to(*last);
  return mappings;
}

}  // namespace memrec::analyzer
