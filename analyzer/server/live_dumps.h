// memrec view --follow's dumps: each file given, and each .dat file that
// appears in a directory given, followed by a FollowedReport (only the
// frames appended since the last poll are read), marked live, ended or cut,
// and turned into the ViewDump the API answers from. poll() runs on one
// thread; the snapshots it makes are new objects, never the served ones.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "load/dump_liveness.h"
#include "reports/followed_report.h"
#include "server/view_model.h"
#include "symbolize/symbolizer.h"

namespace memrec::analyzer::server {

class LiveDumps {
 public:
  // `sources`: dump files and directories of dumps. A file that does not
  // exist yet is followed from when it appears.
  LiveDumps(std::vector<std::string> sources, FollowOptions options);

  // One round: the directories' new dumps join (in name order), every dump
  // neither ended nor cut takes a step; one whose End (or Exec) record came
  // is ended; one whose process is gone without it is finished and cut.
  // The indices of the dumps whose figures changed (or that joined).
  std::vector<std::size_t> poll();

  std::size_t size() const { return dumps_.size(); }
  const std::string& path(std::size_t i) const { return dumps_[i]->path; }
  // Whether dump i has a header yet: until then it has no snapshot.
  bool started(std::size_t i) const { return dumps_[i]->report.started(); }
  DumpState state(std::size_t i) const { return dumps_[i]->state; }
  // A non-empty sentence when following dump i stopped on a corrupt frame.
  const std::string& error(std::size_t i) const { return dumps_[i]->error; }
  // Dump i as read so far, for the API: its report, its whole run's figures
  // and timeline; publish() then gives it the allocation table. Its call
  // sites keep their ids from one snapshot to the next.
  ViewDump snapshot(std::size_t i, Symbolizer& symbolizer);
  // With every handler kept out (the follow loop holds ViewData::follow_lock):
  // takes the events dump i read since the last call into its allocation
  // table, maps the table's rows to `view`'s call sites and gives `view` the
  // table. `view` is dump i's snapshot of this poll, served from now on.
  void publish(std::size_t i, ViewDump& view);

 private:
  struct Followed {
    std::string path;
    FollowedReport report;
    DumpState state = DumpState::kLive;
    std::string error;
  };
  void add(const std::string& path);
  bool step(Followed& d);  // true if its figures changed

  std::vector<std::string> directories_;
  FollowOptions options_;
  std::vector<std::unique_ptr<Followed>> dumps_;
};

}  // namespace memrec::analyzer::server
