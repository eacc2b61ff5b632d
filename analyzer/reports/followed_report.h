// The heap report of a dump that is still being written (memrec view
// --follow): each step() folds only what the dump appended into the same
// replay, and report() gives, at any time, what build_heap_report would give
// of the events handed on so far. Once the dump has ended (or was cut and
// finish() called), that is the report of the finished file. With a table,
// it also grows the allocation table of those events (memrec view's ranges,
// instants and allocation list), published when the caller says.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "load/dump_follower.h"
#include "model/allocation_table.h"
#include "model/heap_timeline.h"
#include "model/mapping_record.h"
#include "model/stack_replay.h"
#include "reports/followed_sites.h"
#include "reports/heap_report.h"

namespace memrec::analyzer {

class FollowedReport {
 public:
  // `with_table`: also grow an allocation table (publish_table()).
  FollowedReport(std::string path, FollowOptions options, bool with_table = false);
  ~FollowedReport();
  FollowedReport(FollowedReport&&) noexcept;

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
  // The anonymous mappings as replayed so far (memrec view's Maps), reaching
  // the latest event read; once started().
  MappingRecord mappings() const;

  // The allocation table with every event replayed so far taken in: costs
  // the events replayed since the last call (a table made afresh, at the
  // first step or a replay started over, takes the history in step(), before
  // any reader has it). Its readers must be kept out during the call (the
  // table they read is the one it fills), and its set_sites called after it. Null without a table, before the first
  // step, or once the dump holds more allocations than a table can (table_full()). A replay started over makes a new
  // table: the one returned before stays as it was, for its readers.
  std::shared_ptr<AllocationTable> publish_table();
  bool table_full() const;

  bool started() const { return follower_ != nullptr; }
  const DumpFollower& follower() const { return *follower_; }  // once started()
  std::size_t restarts() const { return restarts_; }
  // The call sites as of the last report().
  const FollowedSites& sites() const { return sites_; }

 private:
  class TableTee;
  Result<FollowStep> start_and_step();

  std::string path_;
  FollowOptions options_;
  bool with_table_ = false;
  std::unique_ptr<HeapTimeline> timeline_;
  std::unique_ptr<MappingRecord> mappings_;
  std::unique_ptr<StackReplay> replay_;
  // With a table: the events replayed and not yet published, with their
  // tags (the rows they released) and threads, and the table's builder.
  std::unique_ptr<TableTee> tee_;
  std::shared_ptr<AllocationTableBuilder> table_;
  std::unique_ptr<DumpFollower> follower_;
  FollowedSites sites_;  // kept across restarts: stack ids are the dump's own
  std::size_t restarts_ = 0;
};

}  // namespace memrec::analyzer
