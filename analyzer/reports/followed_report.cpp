// A followed report owns its replay and the follower feeding it; starting
// over is making both anew, which a late event requires (dump_follower.h).
#include "reports/followed_report.h"

#include <utility>

namespace memrec::analyzer {

FollowedReport::FollowedReport(std::string path, FollowOptions options)
    : path_(std::move(path)), options_(std::move(options)) {}

Result<FollowStep> FollowedReport::start_and_step() {
  // The header must be there before the replay's window can start at it.
  const auto start = dump_start_ns(path_);
  if (!start) return start.error();
  follower_.reset();
  timeline_ = std::make_unique<HeapTimeline>(*start);
  replay_ = std::make_unique<StackReplay>(TimeWindow{*start});
  replay_->set_timeline(timeline_.get());
  follower_ = std::make_unique<DumpFollower>(path_, options_, *replay_);
  return follower_->step();
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

HeapReport FollowedReport::report(Symbolizer& symbolizer) {
  StackReplay replay = *replay_;
  replay.finish();
  StreamedDump stats = follower_->stats();
  const CallSites& sites = sites_.update(stats.dump, replay.columns(), symbolizer);
  HeapReport r = assemble_heap_report(std::move(stats), RelativeWindow{}, replay, symbolizer, nullptr, &sites);
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

}  // namespace memrec::analyzer
