// The heap report of a dump that is still being written (memrec view
// --follow): each step() folds only what the dump appended into the same
// replay, and report() gives, at any time, what build_heap_report would give
// of the events handed on so far. Once the dump has ended (or was cut and
// finish() called), that is the report of the finished file.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "load/dump_follower.h"
#include "model/heap_timeline.h"
#include "model/stack_replay.h"
#include "reports/followed_sites.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

class FollowedReport {
 public:
  FollowedReport(std::string path, FollowOptions options);

  // Reads the frames the dump appended. A frame holding an event older than
  // one already replayed (FollowStep::out_of_order) makes it replay the dump
  // again from the start, in this same call (restarts() counts them).
  Result<FollowStep> step();
  // The dump's process is gone without an End record: every held event goes.
  void finish();

  // The whole run's report of the events replayed so far (no range: a
  // followed report always runs to the live edge). Copies the replay, whose
  // finish() consumes its live blocks: costs the live heap and the stacks,
  // not the recording's length. Its call sites are kept from one report to
  // the next (sites()): a site keeps its index, only new stacks are symbolized.
  HeapReport report(Symbolizer& symbolizer);
  // The whole run's heap over time as replayed so far (memrec view's
  // timeline before a table), with the RSS samples, reaching the latest
  // event read; once started().
  HeapTimeline timeline() const;

  bool started() const { return follower_ != nullptr; }
  const DumpFollower& follower() const { return *follower_; }  // once started()
  std::size_t restarts() const { return restarts_; }
  // The call sites as of the last report().
  const FollowedSites& sites() const { return sites_; }

 private:
  Result<FollowStep> start_and_step();

  std::string path_;
  FollowOptions options_;
  std::unique_ptr<HeapTimeline> timeline_;
  std::unique_ptr<StackReplay> replay_;
  std::unique_ptr<DumpFollower> follower_;
  FollowedSites sites_;  // kept across restarts: stack ids are the dump's own
  std::size_t restarts_ = 0;
};

}  // namespace memrec::analyzer
